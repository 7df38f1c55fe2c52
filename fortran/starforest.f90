! starforest for Fortran: the C API (include/starforest.h) as a module, with
! mpi_f08 handles. Same names, same 0-based root and leaf offsets, same
! error codes (ierr, STF_SUCCESS = 0); stf_last_error_message() explains a
! failure. Data arguments are arrays of any type (type(*)); buffers given to
! a *_begin belong to starforest until the matching *_end, so they must be
! contiguous (no array sections that need a temporary) and should have the
! ASYNCHRONOUS attribute.
module starforest
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Op
  use starforest_c  ! the C functions (private here) and the types shared with C
  implicit none
  private

  integer, parameter, public :: STF_SUCCESS = 0, STF_ERR_ARG = 1, STF_ERR_NULL = 2, STF_ERR_RANK = 3, &
    STF_ERR_OFFSET = 4, STF_ERR_DUPLICATE = 5, STF_ERR_STATE = 6, STF_ERR_TYPE = 7, STF_ERR_OP = 8, &
    STF_ERR_REQUEST = 9, STF_ERR_OPTION = 10, STF_ERR_MPI = 11, STF_ERR_MEMORY = 12, &
    STF_ERR_UNSUPPORTED = 13, STF_ERR_INTERNAL = 14, STF_ERR_DEVICE = 15, &
    STF_ERR_TIMEOUT = 16
  integer, parameter, public :: STF_PATTERN_ALLGATHER = 0, STF_PATTERN_GATHER = 1, STF_PATTERN_ALLTOALL = 2

  public :: stf_node, stf_stats  ! from starforest_c

  type, public :: stf_sf
    type(c_ptr) :: ptr = c_null_ptr
  end type

  type, public :: stf_request
    type(c_ptr) :: ptr = c_null_ptr
  end type

  public :: stf_error_name, stf_last_error_message, stf_set_options, stf_set_options_from_command_line, &
    stf_create, stf_destroy, &
    stf_set_sf_options, stf_set_type, stf_set_graph, stf_get_leaf_range, stf_get_comm, stf_setup, stf_reset, &
    stf_view, stf_bcast, stf_bcast_begin, stf_bcast_end, stf_reduce, stf_reduce_begin, stf_reduce_end, &
    stf_bcast_init, stf_reduce_init, stf_start, stf_request_free, &
    stf_fetch_and_op, stf_fetch_and_op_begin, stf_fetch_and_op_end, stf_gather, stf_gather_begin, &
    stf_gather_end, stf_scatter, stf_scatter_begin, stf_scatter_end, stf_compute_degree, stf_get_multi_sf, &
    stf_get_stats, stf_compose, stf_create_inverse, stf_create_from_pattern, &
    stf_create_from_global_indices, stf_layout_find_owners, stf_create_migration, stf_device_select, &
    stf_device_synchronize

  ! Global indices are 64-bit; default-integer arrays are accepted too.
  interface stf_create_from_global_indices
    module procedure create_from_global_indices_i8, create_from_global_indices_i4
  end interface
  interface stf_layout_find_owners
    module procedure layout_find_owners_i8, layout_find_owners_i4
  end interface

contains

  ! A C string as a Fortran string.
  function from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  function stf_error_name(code) result(name)
    integer, intent(in) :: code
    character(len=:), allocatable :: name
    name = from_c(c_error_name(int(code, c_int)))
  end function

  ! Message of the last failing call on this thread ("" if none).
  function stf_last_error_message() result(message)
    character(len=:), allocatable :: message
    message = from_c(c_last_error_message())
  end function

  subroutine stf_set_options(options, ierr)
    character(len=*), intent(in) :: options
    integer, intent(out) :: ierr
    ierr = c_set_options(options // c_null_char)
  end subroutine

  ! The -stf_ options of the program's command line (get_command_argument),
  ! as stf_set_options_from_args reads C's argv: defaults for SFs created
  ! afterwards; other arguments are left alone.
  subroutine stf_set_options_from_command_line(ierr)
    integer, intent(out) :: ierr
    character(kind=c_char), allocatable, target :: text(:)
    type(c_ptr), allocatable :: argv(:)
    integer :: n, i, j, length, total, at
    n = command_argument_count()
    total = 0
    do i = 0, n
      call get_command_argument(i, length=length)
      total = total + length + 1
    end do
    ! One buffer of null-terminated arguments, argv pointing into it.
    allocate(text(total), argv(n + 1))
    at = 1
    do i = 0, n
      call get_command_argument(i, length=length)
      block
        character(len=length) :: arg
        call get_command_argument(i, arg)
        do j = 1, length
          text(at + j - 1) = arg(j:j)
        end do
      end block
      text(at + length) = c_null_char
      argv(i + 1) = c_loc(text(at))
      at = at + length + 1
    end do
    ierr = c_set_options_from_args(int(n + 1, c_int), argv)
  end subroutine

  subroutine stf_create(comm, sf, ierr)
    type(MPI_Comm), intent(in) :: comm
    type(stf_sf), intent(out) :: sf
    integer, intent(out) :: ierr
    ierr = c_create(comm%MPI_VAL, sf%ptr)
  end subroutine

  subroutine stf_destroy(sf, ierr)
    type(stf_sf), intent(inout) :: sf
    integer, intent(out) :: ierr
    ierr = c_destroy(sf%ptr)
  end subroutine

  subroutine stf_set_sf_options(sf, options, ierr)
    type(stf_sf), intent(in) :: sf
    character(len=*), intent(in) :: options
    integer, intent(out) :: ierr
    ierr = c_set_sf_options(sf%ptr, options // c_null_char)
  end subroutine

  subroutine stf_set_type(sf, type, ierr)
    type(stf_sf), intent(in) :: sf
    character(len=*), intent(in) :: type
    integer, intent(out) :: ierr
    ierr = c_set_type(sf%ptr, type // c_null_char)
  end subroutine

  ! Leaves' roots from the leaf side (copied). ilocal: 0-based leaf slots,
  ! absent for leaves 0 .. size(iremote)-1.
  subroutine stf_set_graph(sf, nroots, iremote, ierr, ilocal)
    type(stf_sf), intent(in) :: sf
    integer, intent(in) :: nroots
    type(stf_node), intent(in) :: iremote(:)
    integer, intent(out) :: ierr
    integer(c_int), intent(in), optional, target :: ilocal(:)
    integer(c_int), allocatable, target :: slots(:)
    integer(c_int), parameter :: copy_values = 0
    type(c_ptr) :: local
    local = c_null_ptr
    if (present(ilocal)) then
      if (size(ilocal) /= size(iremote)) then
        ierr = STF_ERR_ARG
        return
      end if
      slots = ilocal  ! contiguous, whatever the actual argument was
      if (size(slots) > 0) local = c_loc(slots)
    end if
    ierr = c_set_graph(sf%ptr, int(nroots, c_int), int(size(iremote), c_int), local, copy_values, iremote, &
                       copy_values)
  end subroutine

  subroutine stf_get_leaf_range(sf, minleaf, maxleaf, ierr)
    type(stf_sf), intent(in) :: sf
    integer, intent(out) :: minleaf, maxleaf, ierr
    integer(c_int) :: lo, hi
    ierr = c_get_leaf_range(sf%ptr, lo, hi)
    minleaf = lo
    maxleaf = hi
  end subroutine

  ! The SF's (shared, private) communicator: do not free it.
  subroutine stf_get_comm(sf, comm, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Comm), intent(out) :: comm
    integer, intent(out) :: ierr
    integer(c_int) :: f
    ierr = c_get_comm(sf%ptr, f)
    comm%MPI_VAL = f
  end subroutine

  subroutine stf_setup(sf, ierr)
    type(stf_sf), intent(in) :: sf
    integer, intent(out) :: ierr
    ierr = c_setup(sf%ptr)
  end subroutine

  subroutine stf_reset(sf, ierr)
    type(stf_sf), intent(in) :: sf
    integer, intent(out) :: ierr
    ierr = c_reset(sf%ptr)
  end subroutine

  ! Every rank's graph and plan, printed by rank 0 on standard output (collective).
  subroutine stf_view(sf, ierr)
    type(stf_sf), intent(in) :: sf
    integer, intent(out) :: ierr
    flush(6)
    ierr = c_view(sf%ptr, c_null_ptr)
  end subroutine

  subroutine stf_bcast(sf, unit, rootdata, leafdata, op, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*), intent(in) :: rootdata(*)
    type(*) :: leafdata(*)
    type(MPI_Op), intent(in) :: op
    integer, intent(out) :: ierr
    ierr = c_bcast(sf%ptr, unit%MPI_VAL, rootdata, leafdata, op%MPI_VAL)
  end subroutine

  subroutine stf_bcast_begin(sf, unit, rootdata, leafdata, op, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*), intent(in), asynchronous :: rootdata(*)
    type(*), asynchronous :: leafdata(*)
    type(MPI_Op), intent(in) :: op
    type(stf_request), intent(out) :: req
    integer, intent(out) :: ierr
    ierr = c_bcast_begin(sf%ptr, unit%MPI_VAL, rootdata, leafdata, op%MPI_VAL, req%ptr)
  end subroutine

  subroutine stf_bcast_end(sf, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(stf_request), intent(inout) :: req
    integer, intent(out) :: ierr
    ierr = c_bcast_end(sf%ptr, req%ptr)
  end subroutine

  ! Prepared operations: made once on the same (asynchronous) arrays, begun
  ! by each stf_start and ended by the usual end, which keeps req prepared.
  subroutine stf_bcast_init(sf, unit, rootdata, leafdata, op, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*), intent(in), asynchronous :: rootdata(*)
    type(*), asynchronous :: leafdata(*)
    type(MPI_Op), intent(in) :: op
    type(stf_request), intent(out) :: req
    integer, intent(out) :: ierr
    ierr = c_bcast_init(sf%ptr, unit%MPI_VAL, rootdata, leafdata, op%MPI_VAL, req%ptr)
  end subroutine

  subroutine stf_reduce_init(sf, unit, leafdata, rootdata, op, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*), intent(in), asynchronous :: leafdata(*)
    type(*), asynchronous :: rootdata(*)
    type(MPI_Op), intent(in) :: op
    type(stf_request), intent(out) :: req
    integer, intent(out) :: ierr
    ierr = c_reduce_init(sf%ptr, unit%MPI_VAL, leafdata, rootdata, op%MPI_VAL, req%ptr)
  end subroutine

  subroutine stf_start(sf, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(stf_request), intent(inout) :: req
    integer, intent(out) :: ierr
    ierr = c_start(sf%ptr, req%ptr)
  end subroutine

  subroutine stf_request_free(sf, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(stf_request), intent(inout) :: req
    integer, intent(out) :: ierr
    ierr = c_request_free(sf%ptr, req%ptr)
  end subroutine

  subroutine stf_reduce(sf, unit, leafdata, rootdata, op, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*), intent(in) :: leafdata(*)
    type(*) :: rootdata(*)
    type(MPI_Op), intent(in) :: op
    integer, intent(out) :: ierr
    ierr = c_reduce(sf%ptr, unit%MPI_VAL, leafdata, rootdata, op%MPI_VAL)
  end subroutine

  subroutine stf_reduce_begin(sf, unit, leafdata, rootdata, op, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*), intent(in), asynchronous :: leafdata(*)
    type(*), asynchronous :: rootdata(*)
    type(MPI_Op), intent(in) :: op
    type(stf_request), intent(out) :: req
    integer, intent(out) :: ierr
    ierr = c_reduce_begin(sf%ptr, unit%MPI_VAL, leafdata, rootdata, op%MPI_VAL, req%ptr)
  end subroutine

  subroutine stf_reduce_end(sf, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(stf_request), intent(inout) :: req
    integer, intent(out) :: ierr
    ierr = c_reduce_end(sf%ptr, req%ptr)
  end subroutine

  subroutine stf_fetch_and_op(sf, unit, rootdata, leafdata, leafupdate, op, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*) :: rootdata(*), leafupdate(*)
    type(*), intent(in) :: leafdata(*)
    type(MPI_Op), intent(in) :: op
    integer, intent(out) :: ierr
    ierr = c_fetch_and_op(sf%ptr, unit%MPI_VAL, rootdata, leafdata, leafupdate, op%MPI_VAL)
  end subroutine

  subroutine stf_fetch_and_op_begin(sf, unit, rootdata, leafdata, leafupdate, op, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*), asynchronous :: rootdata(*), leafupdate(*)
    type(*), intent(in), asynchronous :: leafdata(*)
    type(MPI_Op), intent(in) :: op
    type(stf_request), intent(out) :: req
    integer, intent(out) :: ierr
    ierr = c_fetch_and_op_begin(sf%ptr, unit%MPI_VAL, rootdata, leafdata, leafupdate, op%MPI_VAL, req%ptr)
  end subroutine

  subroutine stf_fetch_and_op_end(sf, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(stf_request), intent(inout) :: req
    integer, intent(out) :: ierr
    ierr = c_fetch_and_op_end(sf%ptr, req%ptr)
  end subroutine

  subroutine stf_gather(sf, unit, leafdata, multirootdata, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*), intent(in) :: leafdata(*)
    type(*) :: multirootdata(*)
    integer, intent(out) :: ierr
    ierr = c_gather(sf%ptr, unit%MPI_VAL, leafdata, multirootdata)
  end subroutine

  subroutine stf_gather_begin(sf, unit, leafdata, multirootdata, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*), intent(in), asynchronous :: leafdata(*)
    type(*), asynchronous :: multirootdata(*)
    type(stf_request), intent(out) :: req
    integer, intent(out) :: ierr
    ierr = c_gather_begin(sf%ptr, unit%MPI_VAL, leafdata, multirootdata, req%ptr)
  end subroutine

  subroutine stf_gather_end(sf, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(stf_request), intent(inout) :: req
    integer, intent(out) :: ierr
    ierr = c_gather_end(sf%ptr, req%ptr)
  end subroutine

  subroutine stf_scatter(sf, unit, multirootdata, leafdata, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*), intent(in) :: multirootdata(*)
    type(*) :: leafdata(*)
    integer, intent(out) :: ierr
    ierr = c_scatter(sf%ptr, unit%MPI_VAL, multirootdata, leafdata)
  end subroutine

  subroutine stf_scatter_begin(sf, unit, multirootdata, leafdata, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(MPI_Datatype), intent(in) :: unit
    type(*), intent(in), asynchronous :: multirootdata(*)
    type(*), asynchronous :: leafdata(*)
    type(stf_request), intent(out) :: req
    integer, intent(out) :: ierr
    ierr = c_scatter_begin(sf%ptr, unit%MPI_VAL, multirootdata, leafdata, req%ptr)
  end subroutine

  subroutine stf_scatter_end(sf, req, ierr)
    type(stf_sf), intent(in) :: sf
    type(stf_request), intent(inout) :: req
    integer, intent(out) :: ierr
    ierr = c_scatter_end(sf%ptr, req%ptr)
  end subroutine

  ! Number of leaves of each root (a copy, nroots entries). Collective.
  subroutine stf_compute_degree(sf, degree, ierr)
    type(stf_sf), intent(in) :: sf
    integer, allocatable, intent(out) :: degree(:)
    integer, intent(out) :: ierr
    integer(c_int) :: nroots
    integer(c_int), pointer :: d(:)
    type(c_ptr) :: p
    ierr = c_get_graph_nroots(sf%ptr, nroots, c_null_ptr, c_null_ptr, c_null_ptr)
    if (ierr /= STF_SUCCESS) return
    ierr = c_compute_degree(sf%ptr, p)
    if (ierr /= STF_SUCCESS) return
    allocate(degree(nroots))
    if (nroots > 0) then
      call c_f_pointer(p, d, [nroots])
      degree = d
    end if
  end subroutine

  ! The multi-SF, owned by sf (do not destroy it).
  subroutine stf_get_multi_sf(sf, multi, ierr)
    type(stf_sf), intent(in) :: sf
    type(stf_sf), intent(out) :: multi
    integer, intent(out) :: ierr
    ierr = c_get_multi_sf(sf%ptr, multi%ptr)
  end subroutine

  subroutine stf_get_stats(sf, stats, ierr)
    type(stf_sf), intent(in) :: sf
    type(stf_stats), intent(out) :: stats
    integer, intent(out) :: ierr
    stats%size = c_sizeof(stats)
    ierr = c_get_stats(sf%ptr, stats)
  end subroutine

  subroutine stf_compose(a, b, c, ierr)
    type(stf_sf), intent(in) :: a, b
    type(stf_sf), intent(out) :: c
    integer, intent(out) :: ierr
    ierr = c_compose(a%ptr, b%ptr, c%ptr)
  end subroutine

  subroutine stf_create_inverse(sf, inv, ierr)
    type(stf_sf), intent(in) :: sf
    type(stf_sf), intent(out) :: inv
    integer, intent(out) :: ierr
    ierr = c_create_inverse(sf%ptr, inv%ptr)
  end subroutine

  subroutine stf_create_from_pattern(comm, pattern, nroots, out, ierr)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: pattern, nroots
    type(stf_sf), intent(out) :: out
    integer, intent(out) :: ierr
    ierr = c_create_from_pattern(comm%MPI_VAL, int(pattern, c_int), int(nroots, c_int), out%ptr)
  end subroutine

  ! nowned entries of a contiguous layout; leaf i reads global(i) (0-based indices).
  subroutine create_from_global_indices_i8(comm, nowned, global, out, ierr)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: nowned
    integer(c_int64_t), intent(in) :: global(:)
    type(stf_sf), intent(out) :: out
    integer, intent(out) :: ierr
    ierr = c_create_from_global_indices(comm%MPI_VAL, int(nowned, c_int), int(size(global), c_int), global, out%ptr)
  end subroutine

  subroutine create_from_global_indices_i4(comm, nowned, global, out, ierr)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: nowned
    integer(c_int), intent(in) :: global(:)
    type(stf_sf), intent(out) :: out
    integer, intent(out) :: ierr
    call create_from_global_indices_i8(comm, nowned, int(global, c_int64_t), out, ierr)
  end subroutine

  subroutine layout_find_owners_i8(comm, nowned, global, owners, ierr)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: nowned
    integer(c_int64_t), intent(in) :: global(:)
    type(stf_node), intent(out) :: owners(size(global))
    integer, intent(out) :: ierr
    ierr = c_layout_find_owners(comm%MPI_VAL, int(nowned, c_int), int(size(global), c_int), global, owners)
  end subroutine

  subroutine layout_find_owners_i4(comm, nowned, global, owners, ierr)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: nowned
    integer(c_int), intent(in) :: global(:)
    type(stf_node), intent(out) :: owners(size(global))
    integer, intent(out) :: ierr
    call layout_find_owners_i8(comm, nowned, int(global, c_int64_t), owners, ierr)
  end subroutine

  subroutine stf_create_migration(comm, target, out, nnew, ierr)
    type(MPI_Comm), intent(in) :: comm
    integer(c_int), intent(in) :: target(:)
    type(stf_sf), intent(out) :: out
    integer, intent(out) :: nnew, ierr
    integer(c_int) :: n
    ierr = c_create_migration(comm%MPI_VAL, int(size(target), c_int), target, out%ptr, n)
    nnew = n
  end subroutine

  subroutine stf_device_select(name, ierr)
    character(len=*), intent(in) :: name
    integer, intent(out) :: ierr
    ierr = c_device_select(name // c_null_char)
  end subroutine

  subroutine stf_device_synchronize(ierr)
    integer, intent(out) :: ierr
    ierr = c_device_synchronize()
  end subroutine

end module starforest
