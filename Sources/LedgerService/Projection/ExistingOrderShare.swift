/// Whether the writer's batches revisit orders: a moving average (over about 16
/// batches) of the share of each batch's orders that existed before it. Work that
/// only pays for orders seen before (keeping states in `OrderStateCache`, reading
/// them ahead with `StatePrefetch`) is done only while the share is above 5%: when
/// every webhook creates its order (the benchmark, a flood of registrations)
/// it would cost the writer and help nobody. An order registered and then paid by
/// webhooks, the usual case in production, puts the share near 1.
///
/// Writer thread only (the projector is called from the one writer thread).
final class ExistingOrderShare: @unchecked Sendable {
    private(set) var value = 0.0
    private(set) var revisits = false
    static let threshold = 0.05
    static let smoothing = 1.0 / 16

    /// A batch touched `orders` orders, `new` of which it started.
    func observe(orders: Int, new: Int) {
        guard orders > 0 else { return }
        let share = Double(orders - min(new, orders)) / Double(orders)
        value += (share - value) * Self.smoothing
        revisits = value > Self.threshold
    }
}
