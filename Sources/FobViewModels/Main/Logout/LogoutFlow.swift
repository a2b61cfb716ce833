import FobAccess
import FobClipboard
import FobSessions
import FobStore
import FobSystem
import FoundationEssentials

/// The logout wipe on the main screen: F8 opens the review
/// (``LogoutReviewModel``), Enter there deletes what is ticked in one
/// transaction and locks; a vault busy with another writer keeps the wipe
/// waiting (``pendingWipe``) and retries it on each tick.
final class LogoutFlow: ScreenPart {
    let screen: ScreenContext
    /// A confirmed logout wipe waiting for another process to release the
    /// vault: the keys to delete, retried on each tick.
    private var pendingWipe: Set<ItemKey>?

    init(_ screen: ScreenContext) {
        self.screen = screen
    }

    /// F8: the logout review over every token and OAuth item (of `service`),
    /// opened also when there is none (Enter then only clears the clipboard and locks).
    func openLogoutReview(service: String?) -> Transition {
        let candidates: [LogoutCandidate]
        do { candidates = try LogoutWipe.candidates(in: store, service: service) } catch {
            model.form.message = .error(error.description)
            return .stay
        }
        // With nothing to delete the review still opens: Enter clears the clipboard and locks.
        model.logoutReview = LogoutReviewModel(candidates: candidates, service: service)
        return .show(.logoutReview)
    }

    /// A key while the logout review shows.
    /// - Returns: the transition, and whether the review stays open.
    func handleLogoutReview(_ action: Action, pageRows: Int = 10) -> (Transition, open: Bool) {
        guard let review = model.logoutReview else { return (.stay, false) }
        switch action {
        case .moveSelection(let delta): review.move(by: delta)
        case .cycleKind, .insert(" "): review.toggle()
        case .confirm, .submit:
            // Nothing to delete: the logout still clears the clipboard and locks.
            if review.rows.isEmpty {
                model.logoutReview = nil
                return (.lockWiping(.success(Self.nothingToDelete(clipboardHeldOurs: clipboard.holdsOurValue))), false)
            }
            guard review.selectedCount > 0 else {
                model.form.message = .warning("Nothing ticked, so nothing deleted: Space ticks an item; Esc cancels")
                return (.stay, true)
            }
            let keys = review.selectedKeys
            model.logoutReview = nil
            return (logoutWipe(keys: keys), false)
        case .dismiss, .cancel:
            model.logoutReview = nil
            model.form.message = .info("Logout cancelled: nothing deleted")
            return (.stay, false)
        case .quit:
            model.logoutReview = nil
            return (.quit, false)
        default: break
        }
        return (.stay, true)
    }

    /// What a logout with nothing to delete says. The lock clears the
    /// clipboard only while it holds Fob's copy (text copied since is left
    /// alone), and does so in the background: with a copy of Fob's
    /// pending, the message says what the clear does, not that it is done.
    /// - Parameter clipboardHeldOurs: whether a copy of Fob's may still be on the clipboard.
    static func nothingToDelete(clipboardHeldOurs: Bool) -> String {
        let clipboard =
            clipboardHeldOurs
            ? "the clipboard cleared if it still held Fob's copy" : "no copy of Fob's to clear from the clipboard"
        return "Logged out: nothing to delete; vault locked; " + clipboard
    }

    // MARK: - Logout wipe

    /// The timer step of a wipe that found the vault busy: one more short try.
    /// - Returns: the wipe's transition, or `nil` when no wipe is waiting.
    func retryPendingWipe() -> Transition? {
        guard let keys = pendingWipe else { return nil }
        return logoutWipe(keys: keys)
    }

    /// How long the wipe waits for another process's write lock before the
    /// screen says the vault is busy (milliseconds): short, so the UI never
    /// freezes behind another process.
    static let wipeBusyTimeoutMilliseconds: Int32 = 250

    /// Enter in the logout review: deletes the items ticked (one transaction), then locks; when
    /// the delete failed, stays unlocked (clipboard cleared), nothing deleted,
    /// and says why, or that the vault is busy and to try again.
    func logoutWipe(keys: Set<ItemKey>) -> Transition {
        let report: LogoutWipe.Report
        do {
            report = try LogoutWipe.run(
                in: store, keys: keys,
                busyTimeoutMilliseconds: LogoutFlow.wipeBusyTimeoutMilliseconds)
        } catch {
            clipboard.clearNow()
            if error.isBusy {
                // Stay responsive: try again from the timer, not in a blocking wait.
                pendingWipe = keys
                model.form.message = .warning(
                    "Vault busy: another fob process is writing; logging out as soon as it is done")
            } else {
                pendingWipe = nil
                model.form.message = .error("Logout failed: nothing was deleted; \(error)")
            }
            return .stay
        }
        pendingWipe = nil
        if report.succeeded { return .lockWiping(.success(report.summary)) }
        clipboard.clearNow()
        let cleared = refresh.reload(model, now: clock.now)
        model.form.message = .error(report.summary + (cleared ? HomeFormModel.retrievedClearedNote : ""))
        return .stay
    }
}
