! The C functions behind the module starforest (starforest.f90), as
! iso_c_binding interfaces, and the types they share with C. Users call
! starforest's wrappers; this module is not part of the API.
module starforest_c
  use, intrinsic :: iso_c_binding
  implicit none

  ! A root as seen from a leaf: owning rank and 0-based offset there.
  type, bind(C) :: stf_node
    integer(c_int) :: rank
    integer(c_int) :: index
  end type

  ! This rank's counters of one SF (see stf_stats in starforest.h).
  type, bind(C) :: stf_stats
    integer(c_size_t) :: size  ! set by stf_get_stats
    integer(c_long_long) :: pack_calls, unpack_calls, scatter_calls, bytes_packed, bytes_unpacked, &
      messages_sent, messages_received, device_kernel_launches, device_stream_syncs, device_syncs, &
      device_copies_h2d, device_copies_d2h, device_event_syncs, mpi_buffers_checked, device_buffers_to_mpi, &
      messages_sent_in_node, messages_sent_off_node, bytes_sent_in_node, bytes_sent_off_node
    ! Per operation kind (bcast, reduce, fetch_and_op, gather, scatter): count and seconds.
    integer(c_long_long) :: operations(5)
    real(c_double) :: begin_seconds(5), end_seconds(5), wait_seconds(5)
    integer(c_long_long) :: repeated_begins  ! begins that restarted an earlier one's operation
    integer(c_long_long) :: express_operations  ! prepared or repeated ones ended on the express path
  end type

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

end module starforest_c
