// Exact power-of-two arithmetic on Doubles: the level and zoom rules compare against 2^j, and a floating log2
// would misplace exact powers of two (log2(8) may round to 2.9999...).

enum PowerOfTwo {
    /// 2^exponent, exact for every exponent a Double can represent.
    static func value(_ exponent: Int) -> Double {
        Double(sign: .plus, exponent: exponent, significand: 1)
    }

    /// The smallest integer `j` with 2^j >= `x`, that is ceil(log2(x)), computed exactly from the binary exponent.
    /// `x` must be positive and finite.
    static func ceilLog2(_ x: Double) -> Int {
        precondition(x > 0 && x.isFinite, "ceilLog2 needs a positive finite number, got \(x)")
        let exponent = Int(x.exponent)
        return x.significand == 1 ? exponent : exponent + 1
    }
}
