# cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DSYMBOL=<name> -P EmbedText.cmake
# Writes a C++ file defining `extern const char SYMBOL[]` with INPUT's text.
file(READ ${INPUT} text)
file(WRITE ${OUTPUT}
  "// Generated from ${INPUT} by cmake/EmbedText.cmake.\n"
  "extern const char ${SYMBOL}[];\n"
  "const char ${SYMBOL}[] = R\"attnembed(${text})attnembed\";\n")
