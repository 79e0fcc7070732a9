/*
 * mt_html_assets: the scripts and style sheets of the HTML report and of
 * the flame graph's SVG (analyzer/render/html/), embedded as they are,
 * each ended by a NUL, as mt_html_script and mt_html_style for mt_html.c
 * and mt_flamesvg_script and mt_flamesvg_style for mt_flamesvg.c.  The assembler's
 * .incbin takes the files byte for byte: no generator to run, no
 * generated source to keep in step, and no tool beyond the compiler
 * (xxd is a package of its own; `ld -b binary` names its symbols after
 * the path and leaves the stack executable).  The paths are from the
 * source tree's top, where make runs the assembler; the Makefile makes
 * this object depend on every file.  It must hold nothing but the
 * files.
 */
	.section .rodata
	.globl mt_html_script
	.type mt_html_script, @object
mt_html_script:
	.incbin "analyzer/render/html/report.js"
	.byte 0
	.size mt_html_script, . - mt_html_script

	.globl mt_html_style
	.type mt_html_style, @object
mt_html_style:
	.incbin "analyzer/render/html/report.css"
	.byte 0
	.size mt_html_style, . - mt_html_style

	.globl mt_flamesvg_script
	.type mt_flamesvg_script, @object
mt_flamesvg_script:
	.incbin "analyzer/render/html/flame.js"
	.byte 0
	.size mt_flamesvg_script, . - mt_flamesvg_script

	.globl mt_flamesvg_style
	.type mt_flamesvg_style, @object
mt_flamesvg_style:
	.incbin "analyzer/render/html/flame.css"
	.byte 0
	.size mt_flamesvg_style, . - mt_flamesvg_style

	.section .note.GNU-stack, "", @progbits
