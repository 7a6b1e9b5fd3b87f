package servers

import "syscall"

// dieWithParent has a server get SIGTERM when the process that started
// it dies, even killed (Linux's parent-death signal): a make bench or a
// go test stopped with SIGKILL leaves no server behind. (The signal
// follows the thread that started the server, and Go ends a thread only
// when a goroutine exits locked to it, which nothing here does.)
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
