// LD_PRELOAD: prints the faulting thread's backtrace (with ucontext's IP) on SIGSEGV/SIGABRT/SIGBUS.
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <ucontext.h>
#include <dlfcn.h>
#include <sys/syscall.h>
static void handler(int sig, siginfo_t* info, void* ctx) {
  char buf[256];
  ucontext_t* uc = (ucontext_t*)ctx;
  void* ip = (void*)uc->uc_mcontext.gregs[REG_RIP];
  Dl_info dl;
  int n = snprintf(buf, sizeof buf, "\n=== crash_report: signal %d addr %p tid %ld ip %p", sig, info->si_addr, (long)syscall(SYS_gettid), ip);
  write(2, buf, n);
  if (dladdr(ip, &dl) && dl.dli_fname) { n = snprintf(buf, sizeof buf, " in %s +%#lx (%s)", dl.dli_fname, (unsigned long)((char*)ip - (char*)dl.dli_fbase), dl.dli_sname ? dl.dli_sname : "?"); write(2, buf, n); }
  write(2, "\n", 1);
  void* frames[64];
  int count = backtrace(frames, 64);
  backtrace_symbols_fd(frames, count, 2);
  for (int i = 0; i < count; ++i) if (dladdr(frames[i], &dl) && dl.dli_fname) { n = snprintf(buf, sizeof buf, "  #%d %s +%#lx\n", i, dl.dli_fname, (unsigned long)((char*)frames[i] - (char*)dl.dli_fbase)); write(2, buf, n); }
  _exit(128 + sig);
}
__attribute__((constructor)) static void install(void) {
  static char stack[1 << 16];
  stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
  sigaltstack(&ss, 0);
  struct sigaction sa; memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = handler; sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigaction(SIGSEGV, &sa, 0); sigaction(SIGABRT, &sa, 0); sigaction(SIGBUS, &sa, 0);
}
