"""Matrix Market files as scipy.sparse matrices (through the C reader)."""
from ._core import _mm_read


def read_matrix_market(path):
    """The matrix of a Matrix Market coordinate file (real, integer or pattern;
    general, symmetric or skew-symmetric; plain or gzip) as a
    scipy.sparse.coo_matrix, symmetric files expanded. Not collective.
    Malformed files raise starforest.Error (the message names the line)."""
    from scipy.sparse import coo_matrix  # scipy is needed only here and for CSR

    nrows, ncols, row, col, val = _mm_read(str(path))
    return coo_matrix((val, (row, col)), shape=(nrows, ncols))
