#include "cg/sparse.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace scanlab::sparse {

csr_matrix from_entries(std::int64_t rows, std::int64_t cols, std::vector<coo_entry> entries) {
  if (rows < 0 || cols < 0 || cols > std::numeric_limits<std::int32_t>::max() ||
      rows > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("sparse matrix: " + std::to_string(rows) + " x " + std::to_string(cols) +
                                " is outside 0 .. 2^31 - 1 rows and columns");
  }
  // Row-major order, then columns: duplicates become neighbours.
  std::sort(entries.begin(), entries.end(), [](const coo_entry& a, const coo_entry& b) {
    return a.row != b.row ? a.row < b.row : a.col < b.col;
  });
  csr_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  m.col.reserve(entries.size());
  m.values.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const coo_entry& e = entries[i];
    if (!m.col.empty() && i > 0 && entries[i - 1].row == e.row && entries[i - 1].col == e.col) {
      m.values.back() += e.value;
      continue;
    }
    m.col.push_back(e.col);
    m.values.push_back(e.value);
    ++m.row_ptr[static_cast<std::size_t>(e.row) + 1];
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) m.row_ptr[r + 1] += m.row_ptr[r];
  return m;
}

namespace {

// The Laplacian on a grid of `dims` extents each n: neighbours one step along each axis.
csr_matrix grid_laplacian(std::int64_t n, int dims) {
  if (n < 1) throw std::invalid_argument("Poisson grid: the edge must be at least 1, not " + std::to_string(n));
  std::int64_t rows = 1;
  for (int d = 0; d < dims; ++d) {
    if (rows > std::numeric_limits<std::int32_t>::max() / n) {
      throw std::invalid_argument("Poisson grid: " + std::to_string(n) + "^" + std::to_string(dims) +
                                  " unknowns exceed 2^31 - 1");
    }
    rows *= n;
  }
  csr_matrix m;
  m.rows = m.cols = rows;
  m.row_ptr.reserve(static_cast<std::size_t>(rows) + 1);
  m.col.reserve(static_cast<std::size_t>(rows) * (2 * dims + 1));
  m.values.reserve(m.col.capacity());
  m.row_ptr.push_back(0);
  const std::int64_t stride[3] = {1, n, n * n};
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t coord[3] = {r % n, (r / n) % n, dims == 3 ? r / (n * n) : 0};
    // Columns ascend: the farthest-below neighbours first, the diagonal in the middle.
    for (int d = dims - 1; d >= 0; --d) {
      if (coord[d] > 0) {
        m.col.push_back(static_cast<std::int32_t>(r - stride[d]));
        m.values.push_back(-1.0);
      }
    }
    m.col.push_back(static_cast<std::int32_t>(r));
    m.values.push_back(2.0 * dims);
    for (int d = 0; d < dims; ++d) {
      if (coord[d] < n - 1) {
        m.col.push_back(static_cast<std::int32_t>(r + stride[d]));
        m.values.push_back(-1.0);
      }
    }
    m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
  }
  return m;
}

}  // namespace

csr_matrix poisson2d(std::int64_t n) { return grid_laplacian(n, 2); }
csr_matrix poisson3d(std::int64_t n) { return grid_laplacian(n, 3); }

std::vector<double> multiply(const csr_matrix& a, std::span<const double> x) {
  std::vector<double> y(static_cast<std::size_t>(a.rows), 0.0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    double sum = 0;
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) sum += a.values[k] * x[a.col[k]];
    y[r] = sum;
  }
  return y;
}

bool is_symmetric(const csr_matrix& a) {
  if (a.rows != a.cols) return false;
  // Each (r, c, v) must have its mirror (c, r, v): binary search in row c (columns ascend).
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const std::int64_t c = a.col[k];
      const auto first = a.col.begin() + a.row_ptr[c];
      const auto last = a.col.begin() + a.row_ptr[c + 1];
      const auto it = std::lower_bound(first, last, static_cast<std::int32_t>(r));
      if (it == last || *it != r || a.values[it - a.col.begin()] != a.values[k]) return false;
    }
  }
  return true;
}

}  // namespace scanlab::sparse
