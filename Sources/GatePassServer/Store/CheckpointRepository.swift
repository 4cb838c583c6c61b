import Foundation
import GatePassCore

/// An organization's gates.
protocol CheckpointRepository {
    /// The organization's checkpoints by creation, or every organization's with nil.
    func all(organizationId: String?) throws -> [Checkpoint]
    func find(id: String, organizationId: String) throws -> Checkpoint?
    func defaultCheckpoint(organizationId: String) throws -> Checkpoint?
    func exists(named name: String, organizationId: String) throws -> Bool
    func create(organizationId: String, name: String, now: Date) throws -> Checkpoint
    /// Stores a checkpoint's name and whether it is retired (a PATCH has judged the change).
    func update(id: String, name: String, retired: Bool, at time: Date) throws
}
