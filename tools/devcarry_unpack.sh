# Sourced by the device scripts (tools/gpu/test_gpu.sh, bench/device/*.sh):
#   unpack_pydeps CARRY DEPS
# unpacks CARRY/pydeps.tar.xz (tools/make_devcarry.sh), or an older
# CARRY/polars.tar.xz, into DEPS once per machine (DEPS/.unpacked marks it) and
# sets PYDEPS_PACK to the pack's name. Returns 0 when DEPS is ready, 1 when the
# carry has no pack, 2 when unpacking failed (DEPS is then removed).
unpack_pydeps() {
  local carry=$1 deps=$2
  PYDEPS_PACK=""
  [ -f "$deps/.unpacked" ] && return 0
  for t in "$carry/pydeps.tar.xz" "$carry/polars.tar.xz"; do
    [ -f "$t" ] && { PYDEPS_PACK=$t; break; }
  done
  [ -n "$PYDEPS_PACK" ] || return 1
  rm -rf "$deps" && mkdir -p "$deps" && tar -xJf "$PYDEPS_PACK" -C "$deps" && touch "$deps/.unpacked" \
    || { rm -rf "$deps"; return 2; }
}
