import FobStore
import FobViewModels
import FoundationEssentials

/// The consent question's dialog (``Overlay/consent``): who asks (program,
/// pid, parents, directory, terminal), for which item, through what, and
/// the answers, most important first so that a small terminal keeps them.
extension Renderer {
    /// Draws the dialog of `prompt`: at 80×24 every line; at 40×10 the
    /// answers in one compact block and as many of the facts as fit.
    func drawConsent(_ canvas: inout Canvas, _ prompt: ConsentQuestion) {
        let width = min(72, canvas.columns - 2)
        let inner = width - 4
        let room = min(canvas.rows - 2, 16) - 2 // inside the borders
        let full = Self.consentAnswers(prompt)
        let compact = Self.wrap(Self.compactConsentAnswers(prompt), width: max(1, inner))
        // The full answers when they fit beside three facts, width and height; else the compact line.
        let fits = room - full.count >= 3 && full.allSatisfy { $0.count <= inner }
        let answers = fits ? full : compact
        let facts = Array(Self.consentFacts(prompt, width: inner).prefix(max(1, room - answers.count - 1)))
        let height = facts.count + 1 + answers.count + 2
        let box = dialogBox(&canvas, height: height, width: width, title: "Request")
        let x = box.column + 2
        var y = box.row + 1
        for fact in facts {
            canvas.put(fact, row: y, column: x, width: box.width - 4, role: .normal)
            y += 1
        }
        y += 1
        for line in answers {
            canvas.put(line, row: y, column: x, width: box.width - 4, role: .button)
            y += 1
        }
        canvas.cursor = (box.row + 1, x) // on the question, for screen readers
    }

    /// The facts of a question, most telling first. The item and channel
    /// wrap over up to three lines of `width` cells: an SSH key's question
    /// names the destination at its end (`… to log in to github.com (verified)`).
    static func consentFacts(_ prompt: ConsentQuestion, width: Int) -> [String] {
        let what = wrap("\(prompt.item) through \(prompt.channel)", width: max(1, width - 2)).prefix(3)
        var lines = ["\(prompt.programName)[\(prompt.pid)] asks for the secret of"] + what.map { "  " + $0 }
        lines.append("program \(prompt.program)")
        if !prompt.parents.isEmpty { lines.append("run by \(prompt.parents)") }
        lines.append("in \(prompt.workingDirectory.isEmpty ? "?" : prompt.workingDirectory)")
        lines.append("on \(prompt.terminal.isEmpty ? "no terminal" : prompt.terminal)")
        return lines
    }

    /// The answers, one a line (the order of the requester's terminal's question).
    static func consentAnswers(_ prompt: ConsentQuestion) -> [String] {
        [
            "t  this program until the vault locks",
            "o  once",
            "m  this program for \(prompt.leaseText)",
            "a  always, for this item",
            "d  deny        Esc later",
        ]
    }

    /// The answers in a few words, for a small terminal.
    static func compactConsentAnswers(_ prompt: ConsentQuestion) -> String {
        "t until lock · o once · m \(prompt.leaseShortText) · a always · d deny · Esc later"
    }
}
