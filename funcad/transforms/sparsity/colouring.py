"""Colourings of a sparsity pattern, so that a few products give the whole matrix.

- `column_colouring(P)`: columns of one colour share no row (a distance-2 colouring
  of the bipartite graph of P). The sum of the columns of one colour is one
  Jacobian-vector product, and each of its entries is a single Jacobian entry.
- `row_colouring(P)`: the same for rows (vector-Jacobian products).
- `star_colouring(P)`: for a symmetric P, a distance-1 colouring of its graph in
  which every path on four vertices uses three colours (Gebremedhin, Manne and
  Pothen, "What color is your Jacobian?", SIAM Review 2005, the greedy star
  colouring). Every Hessian entry can then be read from one Hessian-vector
  product: an arrowhead needs 2 colours where column colouring needs n.

Vertices are coloured greedily in largest-first order (decreasing degree), which
colours a tridiagonal pattern with 3 colours and a 5-point stencil with few more
than the optimum of 5. Colours are numbered 0, 1, ...; each function returns an
int64 array of one colour per column (or row).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _largest_first(adj) -> np.ndarray:
    degree = np.diff(adj.indptr)
    return np.argsort(-degree, kind="stable")


def _greedy(adj) -> np.ndarray:
    """Distance-1 greedy colouring of the graph with adjacency `adj` (CSR; a vertex's
    own entry is ignored, since it is uncoloured while it is being coloured)."""
    indptr, indices = adj.indptr.tolist(), adj.indices.tolist()
    colour = [-1] * adj.shape[0]
    for v in _largest_first(adj).tolist():
        used = {colour[w] for w in indices[indptr[v]:indptr[v + 1]]}
        c = 0
        while c in used:
            c += 1
        colour[v] = c
    return np.asarray(colour, dtype=np.int64)


def column_colouring(pattern) -> np.ndarray:
    """One colour per column; columns of one colour have no row in common."""
    p = sp.csr_array(pattern, dtype=bool)
    if p.shape[1] == 0:
        return np.zeros(0, np.int64)
    return _greedy(sp.csr_array(p.T @ p))


def row_colouring(pattern) -> np.ndarray:
    """One colour per row; rows of one colour have no column in common."""
    return column_colouring(sp.csr_array(pattern, dtype=bool).T)


def star_colouring(pattern) -> np.ndarray:
    """One colour per row/column of a symmetric pattern: a star colouring of its graph."""
    p = sp.csr_array(pattern, dtype=bool)
    p = sp.csr_array(p + p.T)
    p.setdiag(False)
    p.eliminate_zeros()
    indptr, indices = p.indptr.tolist(), p.indices.tolist()
    nbrs = [indices[indptr[v]:indptr[v + 1]] for v in range(p.shape[0])]
    colour = [-1] * p.shape[0]
    for v in _largest_first(p).tolist():
        forbidden = set()
        for w in nbrs[v]:
            cw = colour[w]
            if cw >= 0:
                forbidden.add(cw)
            for x in nbrs[w]:
                cx = colour[x]
                if x == v or cx < 0:
                    continue
                if cw < 0:
                    forbidden.add(cx)   # v and x meet at an uncoloured w: a distance-2 pair
                elif cx not in forbidden and any(colour[y] == cw for y in nbrs[x] if y != w):
                    forbidden.add(cx)   # v-w-x-y would be a path on two colours
        c = 0
        while c in forbidden:
            c += 1
        colour[v] = c
    return np.asarray(colour, dtype=np.int64)


def seed_matrix(colours) -> np.ndarray:
    """The (len(colours), number of colours) 0/1 matrix with a one at (j, colours[j])."""
    k = int(colours.max()) + 1 if colours.size else 0
    s = np.zeros((colours.size, k))
    s[np.arange(colours.size), colours] = 1.0
    return s


def star_sources(pattern, colours):
    """Where each entry (i, j) of a symmetric matrix H is found in B = H @ seed_matrix:
    returns (row of B, colour) per entry of `pattern` in CSR order. Entry (i, j) is
    B[i, colour[j]] when no other entry of row i has j's colour, else B[j, colour[i]]."""
    p = sp.csr_array(pattern, dtype=bool)
    rows = np.repeat(np.arange(p.shape[0]), np.diff(p.indptr))
    cols = p.indices.astype(np.int64)
    k = int(colours.max()) + 1 if colours.size else 0
    counts = np.zeros((p.shape[0], k), np.int64)
    np.add.at(counts, (rows, colours[cols]), 1)
    alone = counts[rows, colours[cols]] == 1
    return np.where(alone, rows, cols), np.where(alone, colours[cols], colours[rows])
