//===- peak-rss.cpp - wall time and peak RSS of one command ---------------===//
//
// peak-rss CMD [ARGS...] runs CMD with its output thrown away and prints
// "<wall seconds> <peak RSS in KiB> <exit status>". The kernel counts a
// process's peak RSS from the address space it was forked with, so the
// measuring parent must be small: this tool links no LLVM, where
// schedc-bench, which runs it, holds hundreds of megabytes.
//
//===----------------------------------------------------------------------===//

#include <chrono>
#include <cstdio>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: peak-rss CMD [ARGS...]\n");
    return 2;
  }
  const auto begin = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("peak-rss: fork");
    return 2;
  }
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execv(argv[1], argv + 1);
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) {
    std::perror("peak-rss: wait4");
    return 2;
  }
  const std::chrono::duration<double> wall =
      std::chrono::steady_clock::now() - begin;
  std::printf("%.6f %ld %d\n", wall.count(), usage.ru_maxrss,
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
