//===- XmlText.h - text inside SVG and XML documents ------------*- C++ -*-===//
//
// The SVG pictures (the timeline, the sweep plot) put schedule names,
// action descriptions and labels into their text and titles.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_RENDER_XMLTEXT_H
#define LIB_RENDER_XMLTEXT_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace sched {

/// `text` with the characters XML reserves (& < > ") as entities.
std::string xmlEscaped(llvm::StringRef text);

} // namespace sched

#endif // LIB_RENDER_XMLTEXT_H
