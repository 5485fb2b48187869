/* VerifyBot board package: USART0 of an ATmega328P (Arduino Uno), 115200 8N1.
 *
 * stdout goes to the UART through avr-libc's stdio (printf works; link with
 * -Wl,-u,vfprintf -lprintf_flt for %f). U2X is on for 115200 at 16 MHz, as the
 * Arduino bootloader does. Runs before main as a constructor, so the
 * answer's main() needs no set-up call.
 */
#include <avr/io.h>
#include <stdio.h>

#ifndef F_CPU
#define F_CPU 16000000UL
#endif
#ifndef VB_BAUD
#define VB_BAUD 115200UL
#endif

void vb_uart_putc(char c)
{
    while (!(UCSR0A & (1 << UDRE0)))
        ;
    UDR0 = (uint8_t)c;
}

static int vb_put(char c, FILE *stream)
{
    (void)stream;
    if (c == '\n')
        vb_uart_putc('\r');
    vb_uart_putc(c);
    return 0;
}

static FILE vb_stdout = FDEV_SETUP_STREAM(vb_put, NULL, _FDEV_SETUP_WRITE);

__attribute__((constructor)) void vb_board_init(void)
{
    UCSR0A = 1 << U2X0;
    uint16_t ubrr = (uint16_t)((F_CPU + 4 * VB_BAUD) / (8 * VB_BAUD) - 1);
    UBRR0H = (uint8_t)(ubrr >> 8);
    UBRR0L = (uint8_t)ubrr;
    UCSR0B = (1 << TXEN0) | (1 << RXEN0);
    UCSR0C = (1 << UCSZ01) | (1 << UCSZ00);
    stdout = &vb_stdout;
    stderr = &vb_stdout;
}
