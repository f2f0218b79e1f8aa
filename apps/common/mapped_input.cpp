#include "common/mapped_input.hpp"

#include "common/atomic_file.hpp"
#include "common/npy.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace scanlab::io {

mapped_array::mapped_array(const input_file& file, std::uint64_t offset, dtype type, std::vector<std::int64_t> shape)
    : type_(type), shape_(std::move(shape)) {
  if (offset % size_of(type) != 0) {
    throw std::invalid_argument(file.path().string() + ": data at byte " + std::to_string(offset) +
                                " is not aligned to its " + std::to_string(size_of(type)) + "-byte elements");
  }
  size_ = 1;
  for (const std::int64_t extent : shape_) size_ *= extent;  // checked by the header reader
  if (size_ == 0) return;
  map_bytes_ = static_cast<std::size_t>(offset) + bytes();
  void* p = ::mmap(nullptr, map_bytes_, PROT_READ, MAP_PRIVATE, file.native_handle(), 0);
  if (p == MAP_FAILED) {
    const int error = errno;
    map_bytes_ = 0;
    throw io_error(file.path(), "cannot map it into memory: " + std::generic_category().message(error));
  }
  base_ = p;
  ::madvise(base_, map_bytes_, MADV_SEQUENTIAL);  // advice only: its failure changes nothing
  data_ = static_cast<const std::byte*>(base_) + offset;
}

mapped_array::mapped_array(mapped_array&& other) noexcept
    : type_(other.type_),
      shape_(std::move(other.shape_)),
      size_(std::exchange(other.size_, 0)),
      base_(std::exchange(other.base_, nullptr)),
      map_bytes_(std::exchange(other.map_bytes_, 0)),
      data_(std::exchange(other.data_, nullptr)) {}

mapped_array& mapped_array::operator=(mapped_array&& other) noexcept {
  if (this != &other) {
    unmap();
    type_ = other.type_;
    shape_ = std::move(other.shape_);
    size_ = std::exchange(other.size_, 0);
    base_ = std::exchange(other.base_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    data_ = std::exchange(other.data_, nullptr);
  }
  return *this;
}

mapped_array::~mapped_array() { unmap(); }

void mapped_array::unmap() noexcept {
  if (base_ != nullptr) ::munmap(base_, map_bytes_);
  base_ = nullptr;
  map_bytes_ = 0;
  data_ = nullptr;
}

mapped_array map_npy(const std::filesystem::path& path) {
  const input_file file(path);
  const npy_header header = read_npy_header(path);  // the same checks as read_npy (sizes included)
  if (header.data_offset + header.data_bytes != file.size()) {
    throw io_error(path, "the file changed size while its header was read");
  }
  return mapped_array(file, header.data_offset, header.type, header.shape);
}

mapped_array map_raw(const std::filesystem::path& path, dtype type) {
  const input_file file(path);
  const std::size_t element = size_of(type);
  if (file.size() % element != 0) {
    throw io_error(path, "raw binary of " + std::to_string(file.size()) + " bytes is not a whole number of " +
                             std::string(name(type)) + " elements (" + std::to_string(element) + " bytes each)");
  }
  return mapped_array(file, 0, type, {static_cast<std::int64_t>(file.size() / element)});
}

// ---- input_array ----

dtype input_array::type() const noexcept {
  return std::visit([](const auto& a) { return a.type(); }, storage_);
}

const std::vector<std::int64_t>& input_array::shape() const noexcept {
  return std::visit([](const auto& a) -> const std::vector<std::int64_t>& { return a.shape(); }, storage_);
}

std::int64_t input_array::size() const noexcept {
  return std::visit([](const auto& a) { return a.size(); }, storage_);
}

const std::byte* input_array::data() const noexcept {
  return std::visit([](const auto& a) -> const std::byte* { return a.data(); }, storage_);
}

host_array input_array::take(const std::filesystem::path& source) {
  if (auto* held = std::get_if<host_array>(&storage_)) {
    host_array out = std::move(*held);
    storage_ = host_array{};
    return out;
  }
  host_array out = guard_allocation(source, [&] { return host_array(type(), shape()); });
  if (out.bytes() > 0) std::memcpy(out.data(), data(), out.bytes());
  storage_ = host_array{};
  return out;
}

}  // namespace scanlab::io
