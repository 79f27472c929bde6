#include "engine/tools/model_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gruwb::tools {

bool read_file_bytes(const std::string& path, std::vector<uint8_t>* out, std::string* error) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  struct stat info {};
  if (fstat(fileno(file), &info) != 0 || !S_ISREG(info.st_mode)) {
    std::fclose(file);
    *error = path + ": not a regular file";
    return false;
  }
  out->resize(static_cast<size_t>(info.st_size));
  size_t read = out->empty() ? 0 : std::fread(out->data(), 1, out->size(), file);
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed || read != out->size()) {
    *error = path + ": read error";
    return false;
  }
  return true;
}

bool load_model_bytes(std::vector<uint8_t> bytes, const std::string& label, LoadedModel* out,
                      std::string* error) {
  out->path = label;
  out->bytes = std::move(bytes);
  Status status = Model::load(out->bytes.data(), out->bytes.size(), &out->model);
  if (!status.ok()) {
    *error = label + ": " + status_code_name(status.code()) + ": " + status.message();
    return false;
  }
  return true;
}

bool load_model_file(const std::string& path, LoadedModel* out, std::string* error) {
  std::vector<uint8_t> bytes;
  if (!read_file_bytes(path, &bytes, error)) return false;
  return load_model_bytes(std::move(bytes), path, out, error);
}

namespace {

// Temporary files of saves to `path` that were killed before their rename ("<path>.tmp-<pid>"
// whose process is gone): removed by the next save, so interrupted saves leave nothing behind.
void remove_stale_temporaries(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp-";
  DIR* dir = ::opendir(folder.c_str());
  if (!dir) return;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    char* end = nullptr;
    const long pid = std::strtol(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || pid <= 0 || pid == getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running
    ::unlink((slash == std::string::npos ? name : folder + name).c_str());
  }
  ::closedir(dir);
}

}  // namespace

bool write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes,
                           std::string* error) {
  remove_stale_temporaries(path);
  std::string temp = path + ".tmp-" + std::to_string(getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = path + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(temp.c_str());
      return false;
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    *error = path + ": " + std::strerror(errno);
    ::unlink(temp.c_str());
    return false;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    *error = path + ": " + std::strerror(errno);
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace gruwb::tools
