/* The C side of the Fortran module: every call that takes an MPI handle,
 * with the handle as a Fortran integer (MPI_Fint, the %MPI_VAL of an mpi_f08
 * handle) converted by MPI's *_f2c functions (which may be macros, so
 * Fortran cannot bind to them). Fortran's named datatypes become their C
 * equivalents of the same size, so that every op MPI defines for them works
 * (the library knows C types only). */
#include <mpi.h>

#include "starforest.h"

/* The C type with the layout of a Fortran named type; other types as they are. */
static MPI_Datatype unit_of(MPI_Fint f) {
  MPI_Datatype t = MPI_Type_f2c(f);
  int size = 0;
  if (t == MPI_INTEGER || t == MPI_INTEGER4 || t == MPI_INTEGER8) {
    MPI_Type_size(t, &size);
    return size == 4 ? MPI_INT32_T : size == 8 ? MPI_INT64_T : t;
  }
  if (t == MPI_REAL || t == MPI_DOUBLE_PRECISION || t == MPI_REAL4 || t == MPI_REAL8) {
    MPI_Type_size(t, &size);
    return size == 4 ? MPI_FLOAT : size == 8 ? MPI_DOUBLE : t;
  }
  if (t == MPI_COMPLEX || t == MPI_DOUBLE_COMPLEX || t == MPI_COMPLEX8 || t == MPI_COMPLEX16) {
    MPI_Type_size(t, &size);
    return size == 8 ? MPI_C_FLOAT_COMPLEX : size == 16 ? MPI_C_DOUBLE_COMPLEX : t;
  }
  return t;
}

int stf_f_create(MPI_Fint comm, stf_sf *sf) { return stf_create(MPI_Comm_f2c(comm), sf); }

int stf_f_get_comm(stf_sf sf, MPI_Fint *comm) {
  MPI_Comm c;
  int rc = stf_get_comm(sf, &c);
  if (rc == STF_SUCCESS) *comm = MPI_Comm_c2f(c);
  return rc;
}

int stf_f_bcast_begin(stf_sf sf, MPI_Fint unit, const void *root, void *leaf, MPI_Fint op, stf_request *req) {
  return stf_bcast_begin(sf, unit_of(unit), root, leaf, MPI_Op_f2c(op), req);
}
int stf_f_bcast_init(stf_sf sf, MPI_Fint unit, const void *root, void *leaf, MPI_Fint op, stf_request *req) {
  return stf_bcast_init(sf, unit_of(unit), root, leaf, MPI_Op_f2c(op), req);
}
int stf_f_reduce_init(stf_sf sf, MPI_Fint unit, const void *leaf, void *root, MPI_Fint op, stf_request *req) {
  return stf_reduce_init(sf, unit_of(unit), leaf, root, MPI_Op_f2c(op), req);
}
int stf_f_bcast(stf_sf sf, MPI_Fint unit, const void *root, void *leaf, MPI_Fint op) {
  return stf_bcast(sf, unit_of(unit), root, leaf, MPI_Op_f2c(op));
}
int stf_f_reduce_begin(stf_sf sf, MPI_Fint unit, const void *leaf, void *root, MPI_Fint op, stf_request *req) {
  return stf_reduce_begin(sf, unit_of(unit), leaf, root, MPI_Op_f2c(op), req);
}
int stf_f_reduce(stf_sf sf, MPI_Fint unit, const void *leaf, void *root, MPI_Fint op) {
  return stf_reduce(sf, unit_of(unit), leaf, root, MPI_Op_f2c(op));
}
int stf_f_fetch_and_op_begin(stf_sf sf, MPI_Fint unit, void *root, const void *leaf, void *update, MPI_Fint op,
                             stf_request *req) {
  return stf_fetch_and_op_begin(sf, unit_of(unit), root, leaf, update, MPI_Op_f2c(op), req);
}
int stf_f_fetch_and_op(stf_sf sf, MPI_Fint unit, void *root, const void *leaf, void *update, MPI_Fint op) {
  return stf_fetch_and_op(sf, unit_of(unit), root, leaf, update, MPI_Op_f2c(op));
}
int stf_f_gather_begin(stf_sf sf, MPI_Fint unit, const void *leaf, void *multi, stf_request *req) {
  return stf_gather_begin(sf, unit_of(unit), leaf, multi, req);
}
int stf_f_gather(stf_sf sf, MPI_Fint unit, const void *leaf, void *multi) {
  return stf_gather(sf, unit_of(unit), leaf, multi);
}
int stf_f_scatter_begin(stf_sf sf, MPI_Fint unit, const void *multi, void *leaf, stf_request *req) {
  return stf_scatter_begin(sf, unit_of(unit), multi, leaf, req);
}
int stf_f_scatter(stf_sf sf, MPI_Fint unit, const void *multi, void *leaf) {
  return stf_scatter(sf, unit_of(unit), multi, leaf);
}

int stf_f_create_from_pattern(MPI_Fint comm, int pattern, stf_int nroots, stf_sf *out) {
  return stf_create_from_pattern(MPI_Comm_f2c(comm), (stf_pattern)pattern, nroots, out);
}
int stf_f_create_from_global_indices(MPI_Fint comm, stf_int nowned, stf_int n, const stf_gint *global, stf_sf *out) {
  return stf_create_from_global_indices(MPI_Comm_f2c(comm), nowned, n, global, out);
}
int stf_f_layout_find_owners(MPI_Fint comm, stf_int nowned, stf_int n, const stf_gint *global, stf_node *owners) {
  return stf_layout_find_owners(MPI_Comm_f2c(comm), nowned, n, global, owners);
}
int stf_f_create_migration(MPI_Fint comm, stf_int npoints, const int *target, stf_sf *out, stf_int *nnew) {
  return stf_create_migration(MPI_Comm_f2c(comm), npoints, target, out, nnew);
}
