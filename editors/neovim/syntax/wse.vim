" Syntax highlighting for .wse files (the language server adds semantic tokens on top).
if exists('b:current_syntax')
  finish
endif

syntax keyword wseKeyword import as const kernel layer model param let var in out task then
syntax keyword wseKeyword recv send activate control if else for while return cost pipelined streaming
syntax keyword wseKeyword on where run train bind to split from
syntax keyword wseBoolean true false
syntax keyword wseType f32 f16 i32 u32 bool stream
syntax match wseNumber "\<\d[0-9_]*\(\.\d\+\)\=\([eE][+-]\=\d\+\)\=\>"
syntax match wseNumber "\<0[xX]\x\+\>"
syntax region wseString start=+"+ skip=+\\"+ end=+"+ oneline
syntax match wseComment "//.*$" contains=@Spell
syntax match wseDocComment "///.*$" contains=@Spell
syntax region wseComment start="/\*" end="\*/" contains=@Spell

highlight default link wseKeyword Keyword
highlight default link wseBoolean Boolean
highlight default link wseType Type
highlight default link wseNumber Number
highlight default link wseString String
highlight default link wseComment Comment
highlight default link wseDocComment SpecialComment

let b:current_syntax = 'wse'
