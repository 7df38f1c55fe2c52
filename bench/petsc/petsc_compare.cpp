// petsc_compare: starforest side by side with PETSc (see compare.h).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "compare.h"

#ifndef STF_MATRIX_DIR
#define STF_MATRIX_DIR "../shared/matrices"
#endif

namespace {

void usage(const char *prog) {
  std::printf(
      "usage: mpiexec -n N %s [--pattern all|pingpong|dmda|scatter] [--quick] [--json FILE]\n"
      "       [--max-size BYTES] [--iters-scale F] [--n2d N] [--iters I] [--rounds R]\n"
      "       [--dir DIR] [--matrices a,b,..]\n"
      "  The same patterns through starforest and PETSc (PetscSF, DMDA, VecScatter, MatMult).\n"
      "  pingpong needs 2 ranks (skipped otherwise). PETSc options go in $PETSC_OPTIONS.\n"
      "  --max-size      pingpong: largest message (default 1048576)\n"
      "  --iters-scale   pingpong: osu-style iteration counts times F\n"
      "  --n2d N         dmda: N x N points (default 1024)\n"
      "  --iters, --rounds  dmda and scatter: calls per round (200), rounds (7)\n"
      "  --dir, --matrices  scatter: matrix directory (default $STF_MATRIX_DIR, else %s),\n"
      "                  names (default every *.mtx.gz in the directory)\n"
      "  --quick         small sizes and few iterations\n",
      prog, STF_MATRIX_DIR);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  // Our arguments are not PETSc options: PETSc reads only $PETSC_OPTIONS.
  PetscCallAbort(MPI_COMM_WORLD, PetscInitializeNoArguments());
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  CompareOptions o;
  o.dir = std::getenv("STF_MATRIX_DIR") ? std::getenv("STF_MATRIX_DIR") : STF_MATRIX_DIR;
  std::string pattern = "all", json;
  bool bad = false, help = false;
  for (int i = 1; i < argc && !bad; ++i) {
    std::string a = argv[i];
    bool v = i + 1 < argc;
    if (a == "--help" || a == "-h") help = true;
    else if (a == "--pattern" && v) pattern = argv[++i];
    else if (a == "--quick") o.max_size = 65536, o.iters_scale = 0.02, o.n2d = 128, o.iters = 20, o.rounds = 3;
    else if (a == "--json" && v) json = argv[++i];
    else if (a == "--max-size" && v) o.max_size = std::atol(argv[++i]);
    else if (a == "--iters-scale" && v) o.iters_scale = std::atof(argv[++i]);
    else if (a == "--n2d" && v) o.n2d = std::atoi(argv[++i]);
    else if (a == "--iters" && v) o.iters = std::atoi(argv[++i]);
    else if (a == "--rounds" && v) o.rounds = std::atoi(argv[++i]);
    else if (a == "--dir" && v) o.dir = argv[++i];
    else if (a == "--matrices" && v) {
      std::stringstream ss(argv[++i]);
      for (std::string m; std::getline(ss, m, ',');)
        if (!m.empty()) o.matrices.push_back(m);
    } else bad = true;
  }
  if (o.matrices.empty()) o.matrices = bench::matrix_names(o.dir);
  bad |= pattern != "all" && pattern != "pingpong" && pattern != "dmda" && pattern != "scatter";
  bad |= o.max_size < 8 || !(o.iters_scale > 0) || o.n2d < 4 || o.iters < 1 || o.rounds < 1;
  if (help || bad) {
    if (rank == 0) {
      if (bad) std::fprintf(stderr, "petsc_compare: bad arguments\n");
      usage(argv[0]);
    }
    PetscFinalize();
    MPI_Finalize();
    return bad ? 1 : 0;
  }

  bench::JsonLog log;
  if (pattern == "all" || pattern == "pingpong") compare_pingpong(o, log);
  if (pattern == "all" || pattern == "dmda") compare_dmda(o, log);
  if (pattern == "all" || pattern == "scatter") compare_scatter(o, log);
  int rc = 0;
  if (rank == 0 && !json.empty() && !log.write(json)) rc = 1;
  PetscFinalize();
  MPI_Finalize();
  return rc;
}
