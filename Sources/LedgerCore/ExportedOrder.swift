/// What an orders export shows of an order: the fields of its state it has columns for.
public struct ExportedOrder: Sendable, Hashable {
    public var merchantOrderNo: String
    public var provider: String?
    public var providerOrderId: String?
    public var status: Int
    public var statusName: String
    public var asset: String?
    public var expectedAmount: String?
    public var paidAmount: String?
    public var fiatCurrency: String?
    public var fiatAmount: String?
    public var txHash: String?
    public var createdAt: Timestamp?
    public var paidAt: Timestamp?
    public var latePayment: Bool
    public var attention: Bool
    public var refunded: Bool
    public var lastPosition: Int64?

    public init(merchantOrderNo: String, provider: String?, providerOrderId: String?, status: Int, statusName: String,
                asset: String?, expectedAmount: String?, paidAmount: String?, fiatCurrency: String?, fiatAmount: String?,
                txHash: String?, createdAt: Timestamp?, paidAt: Timestamp?, latePayment: Bool, attention: Bool,
                refunded: Bool, lastPosition: Int64?) {
        self.merchantOrderNo = merchantOrderNo
        self.provider = provider
        self.providerOrderId = providerOrderId
        self.status = status
        self.statusName = statusName
        self.asset = asset
        self.expectedAmount = expectedAmount
        self.paidAmount = paidAmount
        self.fiatCurrency = fiatCurrency
        self.fiatAmount = fiatAmount
        self.txHash = txHash
        self.createdAt = createdAt
        self.paidAt = paidAt
        self.latePayment = latePayment
        self.attention = attention
        self.refunded = refunded
        self.lastPosition = lastPosition
    }

    public init(_ s: OrderState) {
        self.init(merchantOrderNo: s.merchantOrderNo.value, provider: s.provider, providerOrderId: s.providerOrderId,
                  status: s.status.rawValue, statusName: s.statusName, asset: s.asset, expectedAmount: s.expectedAmount,
                  paidAmount: s.paidAmount, fiatCurrency: s.fiatCurrency, fiatAmount: s.fiatAmount, txHash: s.txHash,
                  createdAt: s.createdAt, paidAt: s.paidAt, latePayment: s.latePayment, attention: s.attention,
                  refunded: s.refunded, lastPosition: s.lastPosition)
    }
}
