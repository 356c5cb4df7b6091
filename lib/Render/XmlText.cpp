//===- XmlText.cpp - text inside SVG and XML documents --------------------===//

#include "lib/Render/XmlText.h"

std::string sched::xmlEscaped(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}
