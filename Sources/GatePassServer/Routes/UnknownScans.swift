import Foundation
import GatePassCore

extension GatePassApplication {
    /// Stores a refused scan (`INVALID`, `NOT_FOUND`). One of unknown text (no visitor) is
    /// stored one by one up to the gate's daily cap (`limits.unknownScansPerGatePerDay`, the
    /// site-local day it was received), and beyond only counted in the gate's row of the day
    /// (api.md "Check-in"), so a scanner token cannot fill the disk with junk. The cap is disk
    /// safety, not load: `limits.enabled` false keeps it.
    func recordRefusedScan(_ scan: Scan, organizationId: String, kioskId: String?, now: Date, _ tx: any Transaction) throws {
        if scan.visitorId == nil {
            let day = LocalDay(containing: now, in: try site(organizationId, tx).timeZone)
            guard try tx.scans.countUnknownScan(organizationId: organizationId, checkpointId: scan.checkpointId, day: day,
                                                cap: configuration.limits.unknownScansPerGatePerDay)
            else { return }
        }
        try tx.scans.insert(scan, organizationId: organizationId, kioskId: kioskId)
    }
}
