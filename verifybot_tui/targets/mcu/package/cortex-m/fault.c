/* VerifyBot board package: the fault handler.
 *
 * On a real board nothing watches from outside, so the handler itself tells
 * what happened on the UART, in a line VerifyBot reads back and maps to a
 * function and file:line: "FAULT: <kind> pc=0x... lr=0x... cfsr=0x... hfsr=0x...".
 * Then "FAILED", and the core stops. (Under QEMU VerifyBot also stops the CPU at
 * the fault vector itself, whatever start-up code the firmware brought.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern void vb_uart_putc(char c);

static void put_s(const char *s)
{
    while (*s)
        vb_uart_putc(*s++);
}

static void put_hex(uint32_t v)
{
    put_s("0x");
    for (int i = 28; i >= 0; i -= 4)
        vb_uart_putc("0123456789abcdef"[(v >> i) & 0xF]);
}

void vb_fault_report(const char *kind, const uint32_t *frame)
{
    put_s("\r\nFAULT: ");
    put_s(kind);
    if (frame) {
        put_s(" pc=");
        put_hex(frame[6]);
        put_s(" lr=");
        put_hex(frame[5]);
    }
#if __ARM_ARCH >= 7
    put_s(" cfsr=");
    put_hex(*(volatile uint32_t *)0xE000ED28);
    put_s(" hfsr=");
    put_hex(*(volatile uint32_t *)0xE000ED2C);
    put_s(" bfar=");
    put_hex(*(volatile uint32_t *)0xE000ED38);
#endif
    put_s("\r\nFAILED\r\n");
    for (;;)
        __asm volatile("wfi");
}

void vb_fault_from_frame(uint32_t *frame)
{
    vb_fault_report("HardFault", frame);
}

void vb_unexpected_from_frame(uint32_t *frame)
{
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    static char kind[] = "unexpected interrupt (exception 000)";
    uint32_t n = ipsr & 0x1FF;
    kind[32] = (char)('0' + n / 100 % 10);
    kind[33] = (char)('0' + n / 10 % 10);
    kind[34] = (char)('0' + n % 10);
    vb_fault_report(kind, frame);
}

/* The stacked frame (r0-r3, r12, lr, pc, xpsr) is on the stack the exception came from. */
#define VB_FRAME_TRAMPOLINE(name, target)                                                  \
    __attribute__((naked, weak)) void name(void)                                           \
    {                                                                                      \
        __asm volatile("movs r0, #4\n"                                                     \
                       "mov r1, lr\n"                                                      \
                       "tst r0, r1\n"                                                      \
                       "beq 1f\n"                                                          \
                       "mrs r0, psp\n"                                                     \
                       "b " #target "\n"                                                   \
                       "1: mrs r0, msp\n"                                                  \
                       "b " #target "\n");                                                 \
    }

VB_FRAME_TRAMPOLINE(HardFault_Handler, vb_fault_from_frame)
VB_FRAME_TRAMPOLINE(vb_unexpected_handler, vb_unexpected_from_frame)
