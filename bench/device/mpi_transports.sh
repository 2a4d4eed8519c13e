#!/usr/bin/env bash
# Which MPI transport of the device machine moves an alltoallv fastest
# (bench/device/mpi_a2a.c under each set of mpirun arguments), with what the
# machine offers (Open MPI's components, /dev/shm, ptrace scope). Output in
# $OUT/mpi_transports.log. Run from the repository root.
set -uo pipefail
OUT=${OUT:-/tmp}
exec > >(tee -a "$OUT/mpi_transports.log") 2>&1
B=/tmp/mpi_a2a
mpicc -O2 -o $B bench/device/mpi_a2a.c || exit 2
echo "== $(nproc) cores; $(mpirun --version | head -1)"
ompi_info 2>/dev/null | grep -E "MCA (btl|pml|coll):" | sed 's/^ */  /'
df -h /dev/shm /tmp | sed 's/^/  /'
echo "  ptrace_scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo none)"
echo "  $(uname -r)"
M="--allow-run-as-root --oversubscribe --bind-to none"
run() {
  local np=$1 mib=$2; shift 2
  echo "== np=$np $mib MiB/pair args: $*"
  timeout 60 mpirun $M -np $np "$@" $B $mib 6 2>&1 | tail -8
}
for np in 2 4; do
  run $np 16 --mca btl self,tcp --mca btl_tcp_if_include lo
  run $np 16
  run $np 16 --mca pml ob1 --mca btl self,vader
  run $np 16 --mca pml ob1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none
  run $np 16 --mca pml ob1 --mca btl self,vader --mca btl_vader_single_copy_mechanism cma
  run $np 16 --mca pml ob1 --mca btl self,vader --mca btl_vader_backing_directory /tmp
  run $np 16 --mca pml ucx -x UCX_TLS=sm,self
  run $np 16 --mca pml ucx -x UCX_TLS=posix,self
  run $np 16 --mca pml ucx -x UCX_TLS=cma,self
done
run 2 64 --mca pml ob1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none
run 2 64 --mca btl self,tcp --mca btl_tcp_if_include lo
run 2 1 --mca btl self,tcp --mca btl_tcp_if_include lo
run 2 1 --mca pml ob1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none
