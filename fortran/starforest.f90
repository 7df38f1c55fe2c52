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
  implicit none
  private

  integer, parameter, public :: STF_SUCCESS = 0, STF_ERR_ARG = 1, STF_ERR_NULL = 2, STF_ERR_RANK = 3, &
    STF_ERR_OFFSET = 4, STF_ERR_DUPLICATE = 5, STF_ERR_STATE = 6, STF_ERR_TYPE = 7, STF_ERR_OP = 8, &
    STF_ERR_REQUEST = 9, STF_ERR_OPTION = 10, STF_ERR_MPI = 11, STF_ERR_MEMORY = 12, &
    STF_ERR_UNSUPPORTED = 13, STF_ERR_INTERNAL = 14, STF_ERR_DEVICE = 15, &
    STF_ERR_TIMEOUT = 16
  integer, parameter, public :: STF_PATTERN_ALLGATHER = 0, STF_PATTERN_GATHER = 1, STF_PATTERN_ALLTOALL = 2

  ! A root as seen from a leaf: owning rank and 0-based offset there.
  type, bind(C), public :: stf_node
    integer(c_int) :: rank
    integer(c_int) :: index
  end type

  type, public :: stf_sf
    type(c_ptr) :: ptr = c_null_ptr
  end type

  type, public :: stf_request
    type(c_ptr) :: ptr = c_null_ptr
  end type

  ! This rank's counters of one SF (see stf_stats in starforest.h).
  type, bind(C), public :: stf_stats
    integer(c_size_t) :: size  ! set by stf_get_stats
    integer(c_long_long) :: pack_calls, unpack_calls, scatter_calls, bytes_packed, bytes_unpacked, &
      messages_sent, messages_received, device_kernel_launches, device_stream_syncs, device_syncs, &
      device_copies_h2d, device_copies_d2h, device_event_syncs, mpi_buffers_checked, device_buffers_to_mpi, &
      messages_sent_in_node, messages_sent_off_node, bytes_sent_in_node, bytes_sent_off_node
    ! Per operation kind (bcast, reduce, fetch_and_op, gather, scatter): count and seconds.
    integer(c_long_long) :: operations(5)
    real(c_double) :: begin_seconds(5), end_seconds(5), wait_seconds(5)
    integer(c_long_long) :: repeated_begins  ! begins that restarted an earlier one's operation
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

  interface
    function c_strlen(s) bind(C, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function
    function c_error_name(code) bind(C, name="stf_error_name")
      import :: c_int, c_ptr
      integer(c_int), value :: code
      type(c_ptr) :: c_error_name
    end function
    function c_last_error_message() bind(C, name="stf_last_error_message")
      import :: c_ptr
      type(c_ptr) :: c_last_error_message
    end function
    function c_set_options(options) bind(C, name="stf_set_options")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: options(*)
      integer(c_int) :: c_set_options
    end function
    function c_set_options_from_args(argc, argv) bind(C, name="stf_set_options_from_args")
      import :: c_int, c_ptr
      integer(c_int), value :: argc
      type(c_ptr), intent(in) :: argv(*)
      integer(c_int) :: c_set_options_from_args
    end function
    function c_set_sf_options(sf, options) bind(C, name="stf_set_sf_options")
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: sf
      character(kind=c_char), intent(in) :: options(*)
      integer(c_int) :: c_set_sf_options
    end function
    function c_set_type(sf, type) bind(C, name="stf_set_type")
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: sf
      character(kind=c_char), intent(in) :: type(*)
      integer(c_int) :: c_set_type
    end function
    function c_create(comm, sf) bind(C, name="stf_f_create")
      import :: c_int, c_ptr
      integer(c_int), value :: comm
      type(c_ptr) :: sf
      integer(c_int) :: c_create
    end function
    function c_destroy(sf) bind(C, name="stf_destroy")
      import :: c_int, c_ptr
      type(c_ptr) :: sf
      integer(c_int) :: c_destroy
    end function
    function c_set_graph(sf, nroots, nleaves, ilocal, lmode, iremote, rmode) bind(C, name="stf_set_graph")
      import :: c_int, c_ptr, stf_node
      type(c_ptr), value :: sf, ilocal
      integer(c_int), value :: nroots, nleaves, lmode, rmode
      type(stf_node), intent(in) :: iremote(*)
      integer(c_int) :: c_set_graph
    end function
    function c_get_leaf_range(sf, minleaf, maxleaf) bind(C, name="stf_get_leaf_range")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int) :: minleaf, maxleaf, c_get_leaf_range
    end function
    function c_get_comm(sf, comm) bind(C, name="stf_f_get_comm")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int) :: comm, c_get_comm
    end function
    function c_setup(sf) bind(C, name="stf_setup")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int) :: c_setup
    end function
    function c_reset(sf) bind(C, name="stf_reset")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int) :: c_reset
    end function
    function c_view(sf, out) bind(C, name="stf_view")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf, out
      integer(c_int) :: c_view
    end function
    function c_bcast(sf, unit, root, leaf, op) bind(C, name="stf_f_bcast")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit, op
      type(*), intent(in) :: root(*)
      type(*) :: leaf(*)
      integer(c_int) :: c_bcast
    end function
    function c_bcast_begin(sf, unit, root, leaf, op, req) bind(C, name="stf_f_bcast_begin")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit, op
      type(*), intent(in), asynchronous :: root(*)
      type(*), asynchronous :: leaf(*)
      type(c_ptr) :: req
      integer(c_int) :: c_bcast_begin
    end function
    function c_reduce(sf, unit, leaf, root, op) bind(C, name="stf_f_reduce")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit, op
      type(*), intent(in) :: leaf(*)
      type(*) :: root(*)
      integer(c_int) :: c_reduce
    end function
    function c_reduce_begin(sf, unit, leaf, root, op, req) bind(C, name="stf_f_reduce_begin")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit, op
      type(*), intent(in), asynchronous :: leaf(*)
      type(*), asynchronous :: root(*)
      type(c_ptr) :: req
      integer(c_int) :: c_reduce_begin
    end function
    function c_fetch_and_op(sf, unit, root, leaf, update, op) bind(C, name="stf_f_fetch_and_op")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit, op
      type(*) :: root(*), update(*)
      type(*), intent(in) :: leaf(*)
      integer(c_int) :: c_fetch_and_op
    end function
    function c_fetch_and_op_begin(sf, unit, root, leaf, update, op, req) bind(C, name="stf_f_fetch_and_op_begin")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit, op
      type(*), asynchronous :: root(*), update(*)
      type(*), intent(in), asynchronous :: leaf(*)
      type(c_ptr) :: req
      integer(c_int) :: c_fetch_and_op_begin
    end function
    function c_gather(sf, unit, leaf, multi) bind(C, name="stf_f_gather")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit
      type(*), intent(in) :: leaf(*)
      type(*) :: multi(*)
      integer(c_int) :: c_gather
    end function
    function c_gather_begin(sf, unit, leaf, multi, req) bind(C, name="stf_f_gather_begin")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit
      type(*), intent(in), asynchronous :: leaf(*)
      type(*), asynchronous :: multi(*)
      type(c_ptr) :: req
      integer(c_int) :: c_gather_begin
    end function
    function c_scatter(sf, unit, multi, leaf) bind(C, name="stf_f_scatter")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit
      type(*), intent(in) :: multi(*)
      type(*) :: leaf(*)
      integer(c_int) :: c_scatter
    end function
    function c_scatter_begin(sf, unit, multi, leaf, req) bind(C, name="stf_f_scatter_begin")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit
      type(*), intent(in), asynchronous :: multi(*)
      type(*), asynchronous :: leaf(*)
      type(c_ptr) :: req
      integer(c_int) :: c_scatter_begin
    end function
    function c_compute_degree(sf, degree) bind(C, name="stf_compute_degree")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      type(c_ptr) :: degree
      integer(c_int) :: c_compute_degree
    end function
    function c_get_graph_nroots(sf, nroots, nleaves, ilocal, iremote) bind(C, name="stf_get_graph")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf, nleaves, ilocal, iremote
      integer(c_int) :: nroots, c_get_graph_nroots
    end function
    function c_get_multi_sf(sf, multi) bind(C, name="stf_get_multi_sf")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      type(c_ptr) :: multi
      integer(c_int) :: c_get_multi_sf
    end function
    function c_get_stats(sf, stats) bind(C, name="stf_get_stats")
      import :: c_int, c_ptr, stf_stats
      type(c_ptr), value :: sf
      type(stf_stats) :: stats
      integer(c_int) :: c_get_stats
    end function
    function c_compose(a, b, c) bind(C, name="stf_compose")
      import :: c_int, c_ptr
      type(c_ptr), value :: a, b
      type(c_ptr) :: c
      integer(c_int) :: c_compose
    end function
    function c_create_inverse(sf, inv) bind(C, name="stf_create_inverse")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      type(c_ptr) :: inv
      integer(c_int) :: c_create_inverse
    end function
    function c_create_from_pattern(comm, pattern, nroots, out) bind(C, name="stf_f_create_from_pattern")
      import :: c_int, c_ptr
      integer(c_int), value :: comm, pattern, nroots
      type(c_ptr) :: out
      integer(c_int) :: c_create_from_pattern
    end function
    function c_create_from_global_indices(comm, nowned, n, global, out) &
        bind(C, name="stf_f_create_from_global_indices")
      import :: c_int, c_int64_t, c_ptr
      integer(c_int), value :: comm, nowned, n
      integer(c_int64_t), intent(in) :: global(*)
      type(c_ptr) :: out
      integer(c_int) :: c_create_from_global_indices
    end function
    function c_layout_find_owners(comm, nowned, n, global, owners) bind(C, name="stf_f_layout_find_owners")
      import :: c_int, c_int64_t, stf_node
      integer(c_int), value :: comm, nowned, n
      integer(c_int64_t), intent(in) :: global(*)
      type(stf_node) :: owners(*)
      integer(c_int) :: c_layout_find_owners
    end function
    function c_create_migration(comm, npoints, target, out, nnew) bind(C, name="stf_f_create_migration")
      import :: c_int, c_ptr
      integer(c_int), value :: comm, npoints
      integer(c_int), intent(in) :: target(*)
      type(c_ptr) :: out
      integer(c_int) :: nnew, c_create_migration
    end function
    function c_device_select(name) bind(C, name="stf_device_select")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int) :: c_device_select
    end function
    function c_device_synchronize() bind(C, name="stf_device_synchronize")
      import :: c_int
      integer(c_int) :: c_device_synchronize
    end function
  end interface

  interface
    function c_bcast_end(sf, req) bind(C, name="stf_bcast_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      type(c_ptr) :: req
      integer(c_int) :: c_bcast_end
    end function
    function c_bcast_init(sf, unit, root, leaf, op, req) bind(C, name="stf_f_bcast_init")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit, op
      type(*), intent(in), asynchronous :: root(*)
      type(*), asynchronous :: leaf(*)
      type(c_ptr) :: req
      integer(c_int) :: c_bcast_init
    end function
    function c_reduce_init(sf, unit, leaf, root, op, req) bind(C, name="stf_f_reduce_init")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      integer(c_int), value :: unit, op
      type(*), intent(in), asynchronous :: leaf(*)
      type(*), asynchronous :: root(*)
      type(c_ptr) :: req
      integer(c_int) :: c_reduce_init
    end function
    function c_start(sf, req) bind(C, name="stf_start")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      type(c_ptr) :: req
      integer(c_int) :: c_start
    end function
    function c_request_free(sf, req) bind(C, name="stf_request_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      type(c_ptr) :: req
      integer(c_int) :: c_request_free
    end function
    function c_reduce_end(sf, req) bind(C, name="stf_reduce_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      type(c_ptr) :: req
      integer(c_int) :: c_reduce_end
    end function
    function c_fetch_and_op_end(sf, req) bind(C, name="stf_fetch_and_op_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      type(c_ptr) :: req
      integer(c_int) :: c_fetch_and_op_end
    end function
    function c_gather_end(sf, req) bind(C, name="stf_gather_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      type(c_ptr) :: req
      integer(c_int) :: c_gather_end
    end function
    function c_scatter_end(sf, req) bind(C, name="stf_scatter_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: sf
      type(c_ptr) :: req
      integer(c_int) :: c_scatter_end
    end function
  end interface

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
