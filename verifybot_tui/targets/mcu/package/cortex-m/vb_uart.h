/* VerifyBot board package: the one shape of every Cortex-M UART source of the package.
 *
 * A UART file names its chip's clock after reset (VB_RESET_CLOCK_HZ), includes
 * this, names its registers, and gives the two functions syscalls.c calls:
 * vb_uart_putc, the same for every chip (VB_UART_PUTC: wait while the
 * transmitter is busy, then write the byte), and vb_board_init (the clocks,
 * pins and divider, the chip's own). The build may set VB_CLOCK_HZ (a clock
 * changed from the reset one) and VB_BAUD; 115200 8N1 else.
 */
#ifndef VB_UART_H
#define VB_UART_H

#include <stdint.h>

#define VB_REG(addr) (*(volatile uint32_t *)(addr))

#ifndef VB_CLOCK_HZ
#define VB_CLOCK_HZ VB_RESET_CLOCK_HZ
#endif
#ifndef VB_BAUD
#define VB_BAUD 115200u
#endif

void vb_board_init(void);
void vb_uart_putc(char c);

/* vb_uart_putc for a UART whose transmitter is busy while `busy` holds and whose
 * data register is `data`. */
#define VB_UART_PUTC(busy, data) \
    void vb_uart_putc(char c)    \
    {                            \
        while (busy)             \
            ;                    \
        data = (uint8_t)c;       \
    }

#endif
