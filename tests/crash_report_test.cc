// The crash report (src/cli/crash_report.h): a fatal signal names itself,
// prints a backtrace on stderr and still ends the process by that signal.
#include "cli/crash_report.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

namespace pebench {
namespace {

struct Died {
  int signal = 0;  // 0: did not die of a signal
  std::string err;
};

// Forks; the child installs the report, then raises `sig` (or, sig == 0,
// dereferences a null pointer). Returns how it died and what it wrote.
Died crash_child(int sig) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    if (!install_crash_report()) _exit(3);
    if (sig == 0) {
      volatile int* null = nullptr;
      *null = 1;
    }
    raise(sig);
    _exit(4);
  }
  close(fds[1]);
  Died d;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) d.err.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) d.signal = WTERMSIG(status);
  return d;
}

TEST(CrashReport, AFatalSignalNamesItselfPrintsABacktraceAndStillEndsTheProcess) {
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
  GTEST_SKIP() << "no crash report under AddressSanitizer or without glibc";
#endif
  const Died segv = crash_child(0);
  EXPECT_EQ(segv.signal, SIGSEGV) << segv.err;
  EXPECT_NE(segv.err.find("pebench: crashed with SIGSEGV (invalid memory access); backtrace (innermost first):\n"),
            std::string::npos)
      << segv.err;
  // One line a frame, the test binary's own among them.
  EXPECT_NE(segv.err.find("pebench_tests("), std::string::npos) << segv.err;

  const Died abrt = crash_child(SIGABRT);
  EXPECT_EQ(abrt.signal, SIGABRT) << abrt.err;
  EXPECT_NE(abrt.err.find("pebench: crashed with SIGABRT"), std::string::npos) << abrt.err;
  EXPECT_EQ(abrt.err.find("SIGSEGV"), std::string::npos) << abrt.err;  // reported once, as itself
}

}  // namespace
}  // namespace pebench
