/* VerifyBot board package: newlib retargeting, so printf writes to the board's UART.
 *
 * _write sends every byte through vb_uart_putc (a '\n' becomes "\r\n" for
 * terminals), bringing the UART up first if no start-up code did; _sbrk hands
 * out the RAM between the end of .bss and the stack; _exit ends the program.
 * Built for QEMU (VB_SEMIHOSTING) it ends the emulator with the exit status
 * through semihosting; on a real board it stops the core, since a semihosting
 * call without a debugger attached would fault.
 *
 * Every function here is weak: an answer that brings its own _write, _sbrk or
 * _exit (its own syscalls) replaces just those, and these fill in the rest.
 * The memory bounds are weak references too, so an answer's own linker script
 * that names them otherwise (end, __HeapBase, __StackTop) still links.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#define VB_WEAK __attribute__((weak))

extern void vb_uart_putc(char c);
extern void vb_board_init(void);
extern char _end VB_WEAK, end VB_WEAK, __HeapBase VB_WEAK, _ebss VB_WEAK;
extern char _estack VB_WEAK, __StackTop VB_WEAK, _stack_top VB_WEAK;
#define VB_STACK_RESERVE 1024

/* C++: the handle of this "shared object" that __cxa_atexit registers global destructors
 * with; crtbegin.o would define it, but firmware links with -nostartfiles. */
VB_WEAK void *__dso_handle = 0;

static char vb_up;

/* The UART set-up, once: from the package's start-up code, or at the first printf. */
void vb_board_up(void)
{
    if (!vb_up) {
        vb_up = 1;
        vb_board_init();
    }
}

VB_WEAK int _write(int fd, const char *buf, int len)
{
    (void)fd;
    vb_board_up();
    for (int i = 0; i < len; i++) {
        if (buf[i] == '\n')
            vb_uart_putc('\r');
        vb_uart_putc(buf[i]);
    }
    return len;
}

static char *vb_heap_start(void)
{
    char *const starts[] = {&_end, &end, &__HeapBase, &_ebss};
    for (unsigned i = 0; i < sizeof starts / sizeof starts[0]; i++)
        if (starts[i])
            return starts[i];
    return 0;
}

static char *vb_stack_top(void)
{
    char *const tops[] = {&_estack, &__StackTop, &_stack_top};
    for (unsigned i = 0; i < sizeof tops / sizeof tops[0]; i++)
        if (tops[i])
            return tops[i];
    return (char *)__builtin_frame_address(0);
}

VB_WEAK void *_sbrk(int incr)
{
    static char *brk;
    if (!brk)
        brk = vb_heap_start();
    if (!brk || brk + incr > vb_stack_top() - VB_STACK_RESERVE) {
        errno = ENOMEM;
        return (void *)-1;
    }
    char *old = brk;
    brk += incr;
    return old;
}

VB_WEAK void _exit(int status)
{
#ifdef VB_SEMIHOSTING
    /* SYS_EXIT with ADP_Stopped_ApplicationExit and the status (AArch32 takes a
     * block {reason, subcode} only for SYS_EXIT_EXTENDED, 0x20). */
    uint32_t block[2] = {0x20026u, (uint32_t)status};
    register uint32_t r0 __asm("r0") = 0x20;
    register uint32_t *r1 __asm("r1") = block;
    __asm volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
#else
    (void)status;
#endif
    for (;;)
        __asm volatile("wfi");
}

VB_WEAK int _close(int fd) { (void)fd; return -1; }
VB_WEAK int _fstat(int fd, struct stat *st) { (void)fd; st->st_mode = S_IFCHR; return 0; }
VB_WEAK int _isatty(int fd) { (void)fd; return 1; }
VB_WEAK int _lseek(int fd, int off, int whence) { (void)fd; (void)off; (void)whence; return 0; }
VB_WEAK int _read(int fd, char *buf, int len) { (void)fd; (void)buf; (void)len; return 0; }
VB_WEAK int _getpid(void) { return 1; }
VB_WEAK int _kill(int pid, int sig) { (void)pid; (void)sig; errno = EINVAL; return -1; }

/* No crti/crtn with -nostartfiles: __libc_init_array still calls these. */
VB_WEAK void _init(void) {}
VB_WEAK void _fini(void) {}
