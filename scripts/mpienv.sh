# Sourced by the Makefile's recipes: settings that let Open MPI run tests on a
# small machine (oversubscribed, possibly as root, inside containers).
export OMPI_MCA_rmaps_base_oversubscribe=1
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
