/* VerifyBot board package: USART1 of an STM32F4 (PA9 TX, PA10 RX, AF7), 115200 8N1.
 *
 * Right for the real chip: the GPIOA and USART1 clocks are enabled in RCC, the
 * pins set to their alternate function, and the baud rate divider computed for
 * the 16 MHz HSI clock the chip runs on after reset. QEMU ignores the RCC and
 * GPIO writes (it does not model them) and prints what reaches the data register.
 */
#define VB_RESET_CLOCK_HZ 16000000u
#include "vb_uart.h"

#define RCC_AHB1ENR VB_REG(0x40023830)
#define RCC_APB2ENR VB_REG(0x40023844)
#define GPIOA_MODER VB_REG(0x40020000)
#define GPIOA_AFRH  VB_REG(0x40020024)
#define USART1_SR   VB_REG(0x40011000)
#define USART1_DR   VB_REG(0x40011004)
#define USART1_BRR  VB_REG(0x40011008)
#define USART1_CR1  VB_REG(0x4001100C)

VB_UART_PUTC(!(USART1_SR & (1u << 7)), USART1_DR)  /* busy: no TXE */

void vb_board_init(void)
{
    RCC_AHB1ENR |= 1u << 0;  /* GPIOA */
    RCC_APB2ENR |= 1u << 4;  /* USART1 */
    GPIOA_MODER = (GPIOA_MODER & ~(0xFu << 18)) | (0xAu << 18);  /* PA9, PA10: AF */
    GPIOA_AFRH = (GPIOA_AFRH & ~(0xFFu << 4)) | (0x77u << 4);     /* AF7 */
    USART1_BRR = (VB_CLOCK_HZ + VB_BAUD / 2) / VB_BAUD;
    USART1_CR1 = (1u << 13) | (1u << 3) | (1u << 2);  /* UE, TE, RE */
}
