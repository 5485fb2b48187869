/* VerifyBot board package: newlib retargeting, so printf writes to the board's UART.
 *
 * _write sends every byte through vb_uart_putc (a '\n' becomes "\r\n" for
 * terminals); _sbrk hands out the RAM between the end of .bss and the stack;
 * _exit ends the program. Built for QEMU (VB_SEMIHOSTING) it ends the emulator
 * with the exit status through semihosting; on a real board it stops the core,
 * since a semihosting call without a debugger attached would fault.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

extern void vb_uart_putc(char c);
extern char _end, _estack;
#define VB_STACK_RESERVE 1024

int _write(int fd, const char *buf, int len)
{
    (void)fd;
    for (int i = 0; i < len; i++) {
        if (buf[i] == '\n')
            vb_uart_putc('\r');
        vb_uart_putc(buf[i]);
    }
    return len;
}

void *_sbrk(int incr)
{
    static char *brk = &_end;
    if (brk + incr > &_estack - VB_STACK_RESERVE) {
        errno = ENOMEM;
        return (void *)-1;
    }
    char *old = brk;
    brk += incr;
    return old;
}

void _exit(int status)
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

int _close(int fd) { (void)fd; return -1; }
int _fstat(int fd, struct stat *st) { (void)fd; st->st_mode = S_IFCHR; return 0; }
int _isatty(int fd) { (void)fd; return 1; }
int _lseek(int fd, int off, int whence) { (void)fd; (void)off; (void)whence; return 0; }
int _read(int fd, char *buf, int len) { (void)fd; (void)buf; (void)len; return 0; }
int _getpid(void) { return 1; }
int _kill(int pid, int sig) { (void)pid; (void)sig; errno = EINVAL; return -1; }

/* No crti/crtn with -nostartfiles: __libc_init_array still calls these. */
void _init(void) {}
void _fini(void) {}
