/* VerifyBot board package: UART0 of a TI Stellaris LM3S6965 (PA0 RX, PA1 TX), 115200 8N1.
 *
 * Right for the real chip: the UART0 and GPIOA clocks are enabled in the system
 * control block, PA0/PA1 handed to the UART, and the divider set for the 12 MHz
 * internal oscillator the chip runs on after reset.
 */
#define VB_RESET_CLOCK_HZ 12000000u
#include "vb_uart.h"

#define SYSCTL_RCGC1 VB_REG(0x400FE104)
#define SYSCTL_RCGC2 VB_REG(0x400FE108)
#define GPIOA_AFSEL VB_REG(0x40004420)
#define GPIOA_DEN   VB_REG(0x4000451C)
#define UART0_DR    VB_REG(0x4000C000)
#define UART0_FR    VB_REG(0x4000C018)
#define UART0_IBRD  VB_REG(0x4000C024)
#define UART0_FBRD  VB_REG(0x4000C028)
#define UART0_LCRH  VB_REG(0x4000C02C)
#define UART0_CTL   VB_REG(0x4000C030)

VB_UART_PUTC(UART0_FR & (1u << 5), UART0_DR)  /* busy: TX FIFO full */

void vb_board_init(void)
{
    SYSCTL_RCGC1 |= 1u << 0;  /* UART0 */
    SYSCTL_RCGC2 |= 1u << 0;  /* GPIOA */
    GPIOA_AFSEL |= 0x3u;
    GPIOA_DEN |= 0x3u;
    UART0_CTL = 0;
    uint32_t div64 = (VB_CLOCK_HZ * 4u + VB_BAUD / 2) / VB_BAUD;  /* 64 * clock / (16 * baud) */
    UART0_IBRD = div64 >> 6;
    UART0_FBRD = div64 & 0x3Fu;
    UART0_LCRH = 0x60u;  /* 8 bits, no parity, one stop bit */
    UART0_CTL = 0x301u;  /* UARTEN, TXE, RXE */
}
