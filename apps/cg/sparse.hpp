// Sparse matrices for scanlab-cg, on the host: CSR storage, the Poisson test matrices,
// and the CPU products the reference solver and the checks use.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace scanlab::sparse {

// Compressed sparse rows. Column indices are 32-bit (at most 2^31 - 1 columns), row
// offsets 64-bit (any number of nonzeros). Within a row, columns ascend and are unique.
struct csr_matrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> row_ptr;  // rows + 1 offsets
  std::vector<std::int32_t> col;
  std::vector<double> values;
  [[nodiscard]] std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
};

// One stored entry (0-based).
struct coo_entry {
  std::int32_t row;
  std::int32_t col;
  double value;
};

// Builds CSR from entries in any order; duplicates of a (row, col) are summed, as Matrix
// Market readers conventionally do.
csr_matrix from_entries(std::int64_t rows, std::int64_t cols, std::vector<coo_entry> entries);

// The 5-point Laplacian of an n x n grid of unknowns (Dirichlet boundary): 4 on the
// diagonal, -1 for each grid neighbour. Symmetric positive definite; n^2 rows.
csr_matrix poisson2d(std::int64_t n);
// The 7-point Laplacian of an n x n x n grid: 6 on the diagonal, -1 per neighbour; n^3 rows.
csr_matrix poisson3d(std::int64_t n);

// y = A x, in double.
std::vector<double> multiply(const csr_matrix& a, std::span<const double> x);

// Whether a == a^T exactly (same pattern and values); for the warning that CG needs SPD.
bool is_symmetric(const csr_matrix& a);

}  // namespace scanlab::sparse
