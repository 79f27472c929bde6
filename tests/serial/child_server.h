#pragma once
// A child process (`gruwb board-sim`, QEMU) whose output is scanned for the pty
// it serves; killed by its pid when the test ends.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace gruwb::serial::test {

// A child process whose stdout we scan for the pty name; killed by pid.
class Server {
 public:
  bool start(const std::vector<std::string>& argv, const std::regex& pty_pattern,
             std::string* pty) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      dup2(fds[1], 2);
      close(fds[0]);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execvp(args[0], args.data());
      _exit(127);
    }
    close(fds[1]);
    out_ = fds[0];
    fcntl(out_, F_SETFL, O_NONBLOCK);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::string text;
    while (std::chrono::steady_clock::now() < deadline) {
      char buffer[512];
      const ssize_t n = read(out_, buffer, sizeof buffer);
      if (n > 0) text.append(buffer, static_cast<size_t>(n));
      std::smatch m;
      if (std::regex_search(text, m, pty_pattern)) {
        *pty = m[1];
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "no pty announced; output: " << text;
    return false;
  }
  ~Server() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status;
      waitpid(pid_, &status, 0);
    }
    if (out_ >= 0) close(out_);
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
};

}  // namespace gruwb::serial::test
