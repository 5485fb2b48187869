/* VerifyBot board package: UART0 of the Arm MPS2 (CMSDK APB UART), 115200 8N1.
 *
 * The transmitter must be enabled (CTRL bit 0) or the UART drops every byte,
 * in QEMU as on the FPGA board; BAUDDIV is set for the 25 MHz system clock.
 */
#include <stdint.h>

#define UART0_BASE 0x40004000u
#define UART0_DATA (*(volatile uint32_t *)(UART0_BASE + 0x00))
#define UART0_STATE (*(volatile uint32_t *)(UART0_BASE + 0x04))
#define UART0_CTRL (*(volatile uint32_t *)(UART0_BASE + 0x08))
#define UART0_BAUDDIV (*(volatile uint32_t *)(UART0_BASE + 0x10))

#ifndef VB_CLOCK_HZ
#define VB_CLOCK_HZ 25000000u
#endif
#ifndef VB_BAUD
#define VB_BAUD 115200u
#endif

void vb_board_init(void)
{
    UART0_BAUDDIV = VB_CLOCK_HZ / VB_BAUD;
    UART0_CTRL = 1u;  /* TX enable */
}

void vb_uart_putc(char c)
{
    while (UART0_STATE & 1u)  /* TX buffer full */
        ;
    UART0_DATA = (uint8_t)c;
}
