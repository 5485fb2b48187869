/* VerifyBot board package: Cortex-M start-up code and vector table.
 *
 * Reset_Handler copies .data from flash, zeroes .bss, calls the answer's
 * SystemInit() if it has one (CMSIS style), brings up the board's UART
 * (vb_board_init, in the board's uart file), runs C++ constructors
 * (.init_array), calls main() and passes its return value to exit(), which
 * runs the global destructors. Every device IRQ of the board has its CMSIS
 * handler name (vb_irqs.h, written from the board file: TIM2_IRQHandler...), a
 * weak alias of Default_Handler, so an answer's handler of that name is the one
 * called; the fault vectors go to the fault handler in fault.c. An answer that brings
 * its own start-up code replaces this file and fault.c (build.py).
 */
#include <stdint.h>
#include <stdlib.h>

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
extern int main(void);
extern void __libc_init_array(void);
extern void vb_board_up(void);
extern void SystemInit(void) __attribute__((weak));  /* CMSIS-style clock set-up, if any */

void Reset_Handler(void);
void Default_Handler(void) __attribute__((weak));
void HardFault_Handler(void);
void NMI_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SVC_Handler(void) __attribute__((weak, alias("Default_Handler")));
void DebugMon_Handler(void) __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SysTick_Handler(void) __attribute__((weak, alias("Default_Handler")));

/* The board's device IRQs: VB_IRQ(handler name) or VB_RESERVED, one per IRQ, in order. */
#define VB_IRQ(handler) void handler(void) __attribute__((weak, alias("Default_Handler")));
#define VB_RESERVED
#include "vb_irqs.h"
#undef VB_IRQ
#undef VB_RESERVED

__attribute__((section(".isr_vector"), used))
void (*const vb_vectors[])(void) = {
    (void (*)(void))(&_estack),
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    HardFault_Handler,  /* MemManage: escalates unless enabled */
    HardFault_Handler,  /* BusFault: escalates unless enabled */
    HardFault_Handler,  /* UsageFault: escalates unless enabled */
    0, 0, 0, 0,
    SVC_Handler,
    DebugMon_Handler,
    0,
    PendSV_Handler,
    SysTick_Handler,
#define VB_IRQ(handler) handler,
#define VB_RESERVED Default_Handler,
#include "vb_irqs.h"
};

void Reset_Handler(void)
{
    uint32_t *src = &_sidata;
    for (uint32_t *dst = &_sdata; dst < &_edata;)
        *dst++ = *src++;
    for (uint32_t *dst = &_sbss; dst < &_ebss;)
        *dst++ = 0;
#ifdef VB_MPU_GUARD
    /* The emulator maps more RAM than the chip has (QEMU's netduinoplus2: 192 KB for the
     * STM32F405's 128 KB): an MPU region with no access over what lies past the chip's RAM
     * makes a write there fault as it would on the chip (MemManage, escalated). */
    *(volatile uint32_t *)0xE000ED9C = VB_MPU_GUARD | (1u << 4);  /* RBAR: region 0, VALID */
    *(volatile uint32_t *)0xE000EDA0 = (1u << 28) | ((VB_MPU_GUARD_LOG2 - 1u) << 1) | 1u;
    *(volatile uint32_t *)0xE000ED94 = (1u << 2) | 1u;  /* PRIVDEFENA | ENABLE */
    __asm volatile("dsb\n isb");
#endif
#if defined(__ARM_FP)
    /* Full access to the FPU (CP10, CP11) before any float instruction runs. */
    *(volatile uint32_t *)0xE000ED88 |= (0xFu << 20);
    __asm volatile("dsb\n isb");
#endif
    if (SystemInit)
        SystemInit();
    vb_board_up();
    __libc_init_array();
    exit(main());
}

/* Every vector without a handler of its own; a branch only, so the fault code reads the
 * exception's stacked frame and EXC_RETURN untouched. */
__attribute__((naked, weak)) void Default_Handler(void)
{
    __asm volatile("b vb_unexpected_handler");
}
