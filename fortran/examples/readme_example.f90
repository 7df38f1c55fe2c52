! A ring (the README example in Fortran): rank r owns 1 or 2 roots; its
! leaves point at the roots of rank r+1. Offsets are 0-based, as in C.
program readme_example
  use mpi_f08
  use starforest
  implicit none
  type(stf_sf) :: sf
  type(stf_node), allocatable :: remote(:)
  integer :: rank, nranks, next, nroots, nleaves, i, ierr, wrong
  integer, allocatable :: roots(:), leaves(:)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  next = mod(rank + 1, nranks)
  nroots = 1 + mod(rank, 2)
  nleaves = 1 + mod(next, 2)  ! the next rank's root count
  remote = [(stf_node(next, i), i = 0, nleaves - 1)]

  call stf_create(MPI_COMM_WORLD, sf, ierr); call check(ierr)
  call stf_set_graph(sf, nroots, remote, ierr); call check(ierr)
  roots = [(10 * rank + i, i = 0, nroots - 1)]
  allocate(leaves(nleaves))
  call stf_bcast(sf, MPI_INTEGER, roots, leaves, MPI_REPLACE, ierr); call check(ierr)  ! leaves <- roots
  call stf_reduce(sf, MPI_INTEGER, leaves, roots, MPI_SUM, ierr); call check(ierr)     ! roots += leaves

  wrong = 0
  do i = 1, nleaves
    print '("rank ", i0, " leaf ", i0, " = ", i0)', rank, i - 1, leaves(i)
    if (leaves(i) /= 10 * next + i - 1) wrong = wrong + 1
  end do
  do i = 1, nroots
    print '("rank ", i0, " root ", i0, " = ", i0)', rank, i - 1, roots(i)
    if (roots(i) /= 2 * (10 * rank + i - 1)) wrong = wrong + 1  ! each root has one leaf
  end do
  call stf_destroy(sf, ierr); call check(ierr)
  call MPI_Finalize()
  if (wrong /= 0) error stop 1

contains
  subroutine check(ierr)
    integer, intent(in) :: ierr
    if (ierr /= STF_SUCCESS) then
      print '(a, ": ", a)', stf_error_name(ierr), stf_last_error_message()
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program
