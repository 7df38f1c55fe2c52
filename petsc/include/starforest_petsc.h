/* starforest under PETSc: the PetscSF type "starforest".
 *
 * PETSc's star forest (PetscSF: VecScatter, DMDA ghost updates, MatMult,
 * DMPlex distribution, ...) moves its data through a starforest SF made
 * from the PetscSF's graph at set-up. Two ways in:
 *   - an unmodified PETSc program, with two options:
 *       -dll_append <libdir>/libstarforest_petsc.so -sf_type starforest
 *     (PETSc runs the library's PetscDLLibraryRegister_starforest_petsc
 *     when it loads it);
 *   - a program linked with libstarforest_petsc calls stf_petsc_register()
 *     after PetscInitialize, then selects the type with -sf_type starforest
 *     or PetscSFSetType(sf, PETSCSFSTARFOREST).
 * Options: -sf_starforest_type <type> (PETSc's options database, with the
 * SF's prefix) picks starforest's transport or strategy (basic, neighbor,
 * putsignal, 3step, auto, ...; default: starforest's); starforest's own
 * -stf_* options on the command line (read at registration), STF_OPTIONS and
 * the STF_* variables (read as each SF is made) are the defaults of every SF.
 * PETSc 3.18 or later, host memory; CUDA memory where starforest's active
 * device is "cuda". Errors are PETSc errors carrying starforest's message. */
#ifndef STARFOREST_PETSC_H
#define STARFOREST_PETSC_H

#include <petscsf.h>

#define PETSCSFSTARFOREST "starforest"

/* Register the type "starforest" with PETSc and read the command line's
 * -stf_* options. Call after PetscInitialize; later calls do nothing (until
 * PetscFinalize). */
PETSC_EXTERN PetscErrorCode stf_petsc_register(void);

#endif
