/* VerifyBot board package: UART0 of the Arm MPS2 (CMSDK APB UART), 115200 8N1.
 *
 * The transmitter must be enabled (CTRL bit 0) or the UART drops every byte,
 * in QEMU as on the FPGA board; BAUDDIV is set for the 25 MHz system clock.
 */
#define VB_RESET_CLOCK_HZ 25000000u
#include "vb_uart.h"

#define UART0_BASE 0x40004000u
#define UART0_DATA VB_REG(UART0_BASE + 0x00)
#define UART0_STATE VB_REG(UART0_BASE + 0x04)
#define UART0_CTRL VB_REG(UART0_BASE + 0x08)
#define UART0_BAUDDIV VB_REG(UART0_BASE + 0x10)

VB_UART_PUTC(UART0_STATE & 1u, UART0_DATA)  /* busy: TX buffer full */

void vb_board_init(void)
{
    UART0_BAUDDIV = VB_CLOCK_HZ / VB_BAUD;
    UART0_CTRL = 1u;  /* TX enable */
}
