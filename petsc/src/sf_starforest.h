/* The PetscSF type "starforest": what its files share. */
#ifndef STF_PETSC_SF_STARFOREST_H
#define STF_PETSC_SF_STARFOREST_H

#include <petsc/private/sfimpl.h>
#include <petscversion.h>
#include <starforest.h>

#if PETSC_VERSION_LT(3, 18, 0)
  #error "starforest's PETSc plug-in needs PETSc 3.18 or later"
#endif

/* PETSc's ids and starforest's are the same type in a 32-bit-index PETSc:
 * the graph and rank arrays are then shared where they can be, not copied. */
#if defined(PETSC_USE_64BIT_INDICES)
  #define STF_PETSC_COPY_INDICES 1
#else
  #define STF_PETSC_COPY_INDICES 0
#endif

typedef enum { STF_PETSC_BCAST, STF_PETSC_REDUCE, STF_PETSC_FETCH } StfPetscKind;

/* An operation in flight. PETSc ends an operation by naming its kind, unit
 * and buffers, not by a request: these are the keys. */
typedef struct StfPetscOp {
  StfPetscKind       kind;
  MPI_Datatype       unit;
  const void        *root, *leaf, *update;
  stf_sf             stf; /* the layer whose request is in flight (the last) */
  stf_request        req;
  struct StfPetscOp *next;
} StfPetscOp;

typedef struct {
  /* PETSc lets one leaf slot name several roots (a VecScatter with a
   * repeated target); starforest does not. The leaves are cut into layers,
   * each naming a slot once (layer k: the (k+1)-th time a slot is named),
   * one starforest SF per layer, run one after the other. Every rank has
   * the same number of layers; nearly always one. */
  stf_sf     *layers;         /* made at set-up, destroyed at reset */
  int         nlayers;
  char        type[64];       /* -sf_starforest_type; "" for starforest's default */
  StfPetscOp *inflight;       /* oldest first */
  StfPetscOp *spare;          /* ended operations' records, reused */
  PetscInt   *leaf_offset;    /* leaf ranks, where PETSc's ids are 64-bit */
  PetscInt   *leaf_roots;
} SF_Starforest;

/* A starforest error code as a PETSc error code. */
PETSC_INTERN PetscErrorCode StfPetscErrorCode(int code);

/* A failed starforest call becomes a PETSc error with starforest's message. */
#define PetscCallStf(call) \
  do { \
    int stf_code_ = (call); \
    if (stf_code_) \
      SETERRQ(PETSC_COMM_SELF, StfPetscErrorCode(stf_code_), "starforest: %s: %s", stf_error_name(stf_code_), \
              stf_last_error_message()); \
  } while (0)

PETSC_INTERN PetscErrorCode PetscSFCreate_Starforest(PetscSF sf);
/* The operations' entries of sf->ops (operations.c). */
PETSC_INTERN void StfPetscSetOperations(PetscSF sf);
/* Frees the records of ended operations; an operation still in flight is an error. */
PETSC_INTERN PetscErrorCode StfPetscFreeOperations(PetscSF sf);

#endif
