/* VerifyBot board package: UART0 of a TI Stellaris LM3S6965 (PA0 RX, PA1 TX), 115200 8N1.
 *
 * Right for the real chip: the UART0 and GPIOA clocks are enabled in the system
 * control block, PA0/PA1 handed to the UART, and the divider set for the 12 MHz
 * internal oscillator the chip runs on after reset.
 */
#include <stdint.h>

#define REG(addr) (*(volatile uint32_t *)(addr))
#define SYSCTL_RCGC1 REG(0x400FE104)
#define SYSCTL_RCGC2 REG(0x400FE108)
#define GPIOA_AFSEL REG(0x40004420)
#define GPIOA_DEN   REG(0x4000451C)
#define UART0_DR    REG(0x4000C000)
#define UART0_FR    REG(0x4000C018)
#define UART0_IBRD  REG(0x4000C024)
#define UART0_FBRD  REG(0x4000C028)
#define UART0_LCRH  REG(0x4000C02C)
#define UART0_CTL   REG(0x4000C030)

#ifndef VB_CLOCK_HZ
#define VB_CLOCK_HZ 12000000u
#endif
#ifndef VB_BAUD
#define VB_BAUD 115200u
#endif

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

void vb_uart_putc(char c)
{
    while (UART0_FR & (1u << 5))  /* TX FIFO full */
        ;
    UART0_DR = (uint8_t)c;
}
