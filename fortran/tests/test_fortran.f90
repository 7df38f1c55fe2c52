! The Fortran module against expected values: a ring bcast, a 1D periodic
! halo exchange (split phase) with its reduce (the transpose), fetch-and-op,
! gather and the degree, Fortran and C datatypes, error codes, and a layout
! whose 64-bit global ids pass 2^31 (default-integer ids accepted too).
program test_fortran
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t
  use mpi_f08
  use starforest
  implicit none
  integer :: rank, nranks, ierr, failures
  failures = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  call ring()
  call halo()
  call fetch_gather_degree()
  call command_line()
  call errors()
  call layout()

  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '("test_fortran: ", i0, " failure(s) on ", i0, " ranks")', failures, nranks
  call MPI_Finalize()
  if (failures /= 0) error stop 1

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      print '("rank ", i0, ": FAILED ", a, " (", a, ")")', rank, what, stf_last_error_message()
    end if
  end subroutine

  ! Each rank's 3 leaves read the 3 roots of the next rank, reversed; real(8) and integer(8) data.
  subroutine ring()
    type(stf_sf) :: sf
    integer :: i, next
    real(8) :: roots(3), leaves(3)
    integer(8) :: iroots(3), ileaves(3)
    type(stf_stats) :: stats
    next = mod(rank + 1, nranks)
    call stf_create(MPI_COMM_WORLD, sf, ierr)
    call stf_set_graph(sf, 3, [(stf_node(next, 2 - i), i = 0, 2)], ierr)
    call expect(ierr == STF_SUCCESS, "ring set_graph")
    roots = [(100.0d0 * rank + i, i = 1, 3)]
    leaves = -1
    call stf_bcast(sf, MPI_DOUBLE_PRECISION, roots, leaves, MPI_REPLACE, ierr)
    call expect(ierr == STF_SUCCESS .and. all(leaves == [(100.0d0 * next + i, i = 3, 1, -1)]), "ring bcast real(8)")
    iroots = [(1000_8 * rank + i, i = 1, 3)]
    ileaves = 5
    call stf_bcast(sf, MPI_INTEGER8, iroots, ileaves, MPI_SUM, ierr)  ! a Fortran type with a sum
    call expect(ierr == STF_SUCCESS .and. all(ileaves == [(5 + 1000_8 * next + i, i = 3, 1, -1)]), &
                "ring bcast integer(8) sum")
    ! One message of 3 values to the previous rank per bcast.
    call stf_get_stats(sf, stats, ierr)
    call expect(ierr == STF_SUCCESS .and. stats%messages_sent == 2 .and. &
                stats%messages_sent_in_node + stats%messages_sent_off_node == 2 .and. &
                stats%bytes_sent_in_node + stats%bytes_sent_off_node == 48, "ring stats")
    call expect(stats%operations(1) == 2 .and. stats%begin_seconds(1) > 0 .and. &
                stats%wait_seconds(1) <= stats%end_seconds(1), "ring timings")
    call stf_destroy(sf, ierr)
    call expect(ierr == STF_SUCCESS, "ring destroy")
  end subroutine

  ! n cells per rank on a periodic line, one ghost on each side: u(0) and
  ! u(n+1) mirror the neighbours' boundary cells (leaf slots 0 and n+1 of
  ! the ghosted array u(0:n+1)).
  subroutine halo()
    integer, parameter :: n = 5
    type(stf_sf) :: sf
    type(stf_request) :: req
    real(8), asynchronous :: owned(n), u(0:n + 1)
    real(8) :: back(n), expected(n)
    integer :: left, right, i, k
    left = mod(rank - 1 + nranks, nranks)
    right = mod(rank + 1, nranks)
    call stf_create(MPI_COMM_WORLD, sf, ierr)
    call stf_set_graph(sf, n, [stf_node(left, n - 1), stf_node(right, 0)], ierr, ilocal=[0_c_int, int(n + 1, c_int)])
    owned = [(dble(rank * n + i), i = 1, n)]
    u = 0
    u(1:n) = owned
    call stf_bcast_begin(sf, MPI_DOUBLE_PRECISION, owned, u, MPI_REPLACE, req, ierr)
    call expect(ierr == STF_SUCCESS, "halo bcast_begin")
    call stf_bcast_end(sf, req, ierr)
    call expect(ierr == STF_SUCCESS .and. u(0) == dble(left * n + n) .and. u(n + 1) == dble(right * n + 1) &
                .and. all(u(1:n) == owned), "halo exchange")
    ! The transpose: ghost values summed back into the cells they mirror.
    back = 0
    call stf_reduce_begin(sf, MPI_DOUBLE_PRECISION, u, back, MPI_SUM, req, ierr)
    call stf_reduce_end(sf, req, ierr)
    expected = 0
    expected(1) = expected(1) + dble(rank * n + 1)  ! read by the left neighbour's right ghost
    expected(n) = expected(n) + dble(rank * n + n)  ! read by the right neighbour's left ghost
    call expect(ierr == STF_SUCCESS .and. all(back == expected), "halo reduce (sum)")
    ! A time loop: the same exchange prepared once, started with new values.
    call stf_bcast_init(sf, MPI_DOUBLE_PRECISION, owned, u, MPI_REPLACE, req, ierr)
    call expect(ierr == STF_SUCCESS, "halo bcast_init")
    do i = 1, 3
      owned = [(dble(rank * n + k + 100 * i), k = 1, n)]
      call stf_start(sf, req, ierr)
      call expect(ierr == STF_SUCCESS, "halo start")
      call stf_bcast_end(sf, req, ierr)
      call expect(ierr == STF_SUCCESS .and. u(0) == dble(left * n + n + 100 * i) .and. &
                  u(n + 1) == dble(right * n + 1 + 100 * i), "prepared halo exchange")
    end do
    call stf_destroy(sf, ierr)
    call expect(ierr == STF_ERR_STATE, "destroy refused while a prepared request is held")
    call stf_request_free(sf, req, ierr)
    call expect(ierr == STF_SUCCESS, "halo request_free")
    call stf_destroy(sf, ierr)
  end subroutine

  ! Every rank's leaf points at root 0 of rank 0.
  subroutine fetch_gather_degree()
    type(stf_sf) :: sf
    integer :: nroots, i
    integer, allocatable :: degree(:)
    integer(c_int) :: root(1), leaf(1), update(1)
    integer(c_int), allocatable :: multi(:)
    nroots = merge(1, 0, rank == 0)
    call stf_create(MPI_COMM_WORLD, sf, ierr)
    call stf_set_graph(sf, nroots, [stf_node(0, 0)], ierr)
    call stf_compute_degree(sf, degree, ierr)
    call expect(ierr == STF_SUCCESS .and. size(degree) == nroots, "degree size")
    if (rank == 0) call expect(degree(1) == nranks, "degree of the shared root")
    root = 1000
    leaf = rank + 1
    call stf_fetch_and_op(sf, MPI_INTEGER, root, leaf, update, MPI_SUM, ierr)
    ! contributions in rank order: rank r sees 1000 + 1 + 2 + ... + r
    call expect(ierr == STF_SUCCESS .and. update(1) == 1000 + rank * (rank + 1) / 2, "fetch_and_op")
    if (rank == 0) call expect(root(1) == 1000 + nranks * (nranks + 1) / 2, "fetch_and_op root")
    allocate(multi(merge(nranks, 0, rank == 0)))
    call stf_gather(sf, MPI_INTEGER, leaf, multi, ierr)
    if (rank == 0) call expect(ierr == STF_SUCCESS .and. all(multi == [(i, i = 1, nranks)]), "gather")
    call stf_destroy(sf, ierr)
  end subroutine

  ! Run with and without -stf_ arguments (fortran/CMakeLists.txt): a line
  ! naming -stf_no_such_option anywhere must be refused, any other accepted.
  subroutine command_line()
    character(len=64) :: arg
    logical :: bad
    integer :: k
    call stf_set_options_from_command_line(ierr)
    bad = .false.
    do k = 1, command_argument_count()
      call get_command_argument(k, arg)
      bad = bad .or. arg == "-stf_no_such_option"
    end do
    if (bad) then
      call expect(ierr == STF_ERR_OPTION .and. index(stf_last_error_message(), "-stf_no_such_option") > 0, &
                  "an unknown option on the command line gives STF_ERR_OPTION")
    else
      call expect(ierr == STF_SUCCESS, "options from the command line")
    end if
  end subroutine

  subroutine errors()
    type(stf_sf) :: sf
    call stf_create(MPI_COMM_WORLD, sf, ierr)
    call stf_set_graph(sf, 1, [stf_node(nranks, 0)], ierr)
    call expect(ierr == STF_ERR_RANK .and. stf_error_name(ierr) == "STF_ERR_RANK" .and. &
                index(stf_last_error_message(), "outside the communicator") > 0, "bad rank gives STF_ERR_RANK")
    call stf_set_options("-stf_no_such_option 1", ierr)
    call expect(ierr == STF_ERR_OPTION, "unknown option gives STF_ERR_OPTION")
    call stf_set_type(sf, "basic", ierr)
    call expect(ierr == STF_SUCCESS, "set_type basic")
    call stf_destroy(sf, ierr)
    call stf_create(MPI_COMM_NULL, sf, ierr)
    call expect(ierr == STF_ERR_ARG, "MPI_COMM_NULL gives STF_ERR_ARG")
  end subroutine

  ! 2^30 + 7p entries on rank p (counts only); every rank asks for the last
  ! id of every rank, past 2^31 from 3 ranks on.
  subroutine layout()
    type(stf_sf) :: sf
    type(stf_node) :: owners(nranks)
    integer(c_int64_t) :: start(0:nranks), last(nranks)
    integer :: p
    integer(c_int) :: small(1)
    start(0) = 0
    do p = 0, nranks - 1
      start(p + 1) = start(p) + 2_c_int64_t**30 + 7 * p
    end do
    last = start(1:nranks) - 1
    call stf_layout_find_owners(MPI_COMM_WORLD, 2**30 + 7 * rank, last, owners, ierr)
    call expect(ierr == STF_SUCCESS .and. all(owners%rank == [(p, p = 0, nranks - 1)]) .and. &
                all(start(owners%rank) + owners%index == last), "layout_find_owners of 64-bit ids")
    small(1) = 5
    call stf_create_from_global_indices(MPI_COMM_WORLD, 2**30 + 7 * rank, small, sf, ierr)
    call expect(ierr == STF_SUCCESS, "create_from_global_indices of default-integer ids")
    call stf_destroy(sf, ierr)
  end subroutine

end program
