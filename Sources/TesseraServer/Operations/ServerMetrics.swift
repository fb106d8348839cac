import Foundation
import Tessera

/// What `GET /metrics` tells an operator about a site: requests by route and status, their latency and the bytes
/// sent, the server's workers busy and queued, the renders in flight and queued against the render budget, the
/// requests refused with a 503 (by the workers' queue or the render budget), the
/// response cache's hits and misses and the memory it holds, the open images, the pyramid builds and their
/// durations, and the process's resident memory.
public final class ServerMetrics: Sendable {
    public let registry = MetricsRegistry()
    private let requests: MetricsRegistry.Counter
    private let latency: MetricsRegistry.Histogram
    private let bytesSent: MetricsRegistry.Counter
    private let builds: MetricsRegistry.Counter
    private let buildDurations: MetricsRegistry.Histogram

    /// Request latencies' bucket bounds, in seconds: a stored tile's fraction of a millisecond to a large render.
    static let latencyBounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
    /// Pyramid builds' bucket bounds, in seconds.
    static let buildBounds = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600]

    /// The metrics of a site serving `service` with the server's `workers` (when given); its pyramid cache's
    /// builds are recorded as they finish.
    public init(service: IIIFService, workers: HandlerPool? = nil) {
        let registry = registry
        requests = registry.counter("tessera_http_requests_total", help: "HTTP requests answered, by route and status.",
                                    labelNames: ["route", "status"])
        latency = registry.histogram("tessera_http_request_duration_seconds",
                                     help: "Time from a request's headers to its response (before a streamed body), by route.",
                                     labelNames: ["route"], bounds: Self.latencyBounds)
        bytesSent = registry.counter("tessera_http_response_bytes_total",
                                     help: "Response body bytes sent whole, by route (streamed bodies are not counted).",
                                     labelNames: ["route"])
        if let workers {
            registry.gauge("tessera_workers_busy", help: "Workers making slow answers (renders, streams) now.") {
                Double(workers.usage.busy)
            }
            registry.gauge("tessera_workers_queued", help: "Requests waiting for a worker.") { Double(workers.usage.queued) }
            registry.counter("tessera_worker_refusals_total",
                             help: "Requests refused with 503 before a worker took them (waited too long).") {
                Double(workers.usage.refused)
            }
        }
        let budget = service.renderBudget
        registry.gauge("tessera_renders_in_flight", help: "Renders running now.") { Double(budget.usage.inFlight) }
        registry.gauge("tessera_renders_queued", help: "Renders waiting for render memory.") { Double(budget.usage.queued) }
        registry.counter("tessera_render_refusals_total",
                         help: "Renders refused with 503 (queue full or waited too long).") { Double(budget.usage.refused) }
        registry.gauge("tessera_render_memory_bytes", help: "Render memory reserved by the renders in flight.") {
            Double(budget.usage.bytes)
        }
        registry.gauge("tessera_render_memory_limit_bytes", help: "The render budget (--render-memory).") {
            Double(budget.limits.bytes)
        }
        let responses = service.responses
        Self.registerCache(registry, name: "response_cache", entries: "rendered responses", option: "--response-cache",
                           lookups: { responses.lookups },
                           bytes: { responses.usage.bytes }, limit: responses.byteLimit)
        let tiles = service.decodedTiles
        Self.registerCache(registry, name: "decoded_tiles", entries: "decoded JPEG 2000 tiles", option: "--decoded-tiles",
                           lookups: { tiles.lookups }, bytes: { tiles.usage.bytes }, limit: tiles.byteLimit)
        let thumbnails = service.thumbnailPlanes
        Self.registerCache(registry, name: "thumbnail_planes", entries: "decoded one-tile levels",
                           option: "fixed, IIIFService.thumbnailPlaneBytes",
                           lookups: { thumbnails.lookups },
                           bytes: { thumbnails.usage.bytes }, limit: thumbnails.byteLimit)
        registry.gauge("tessera_open_images", help: "Images open.") { Double(service.openImages.count) }
        registry.gauge("tessera_open_images_bytes", help: "Memory the open images hold, estimated.") {
            Double(service.openImages.bytes)
        }
        builds = registry.counter("tessera_pyramid_builds_total", help: "Pyramid builds finished, by kind and outcome.",
                                  labelNames: ["kind", "outcome"])
        buildDurations = registry.histogram("tessera_pyramid_build_duration_seconds",
                                            help: "Pyramid builds' durations, by kind.", labelNames: ["kind"],
                                            bounds: Self.buildBounds)
        registry.gauge("process_resident_memory_bytes", help: "Resident memory of the server's process.") {
            Double(Self.residentBytes())
        }
        let builds = builds, buildDurations = buildDurations
        service.configuration.cache?.observeBuilds { report in
            let kind = report.isPreview ? "preview" : "full"
            builds.add(labels: [kind, report.succeeded ? "built" : "failed"])
            buildDurations.observe(report.seconds, labels: [kind])
        }
    }

    /// Records one answered request of `route` with `status`, `bytes` of body, `seconds` after its headers.
    public func record(route: String, status: Int, bytes: Int, seconds: Double) {
        requests.add(labels: [route, String(status)])
        latency.observe(seconds, labels: [route])
        bytesSent.add(Double(bytes), labels: [route])
    }

    /// The page: every metric in the text exposition format.
    public var response: HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", MetricsRegistry.contentType), ("Cache-Control", "no-store")],
                     body: Array(registry.exposition.utf8))
    }

    /// The process's resident set, in bytes, from /proc/self/statm (0 where there is none).
    /// The lookups (hits, waits for an identical entry being made, misses), the bytes held and the limit of one of
    /// the server's byte-bounded caches, as `tessera_{name}_hits_total` and so on; `entries` names what it holds.
    private static func registerCache(_ registry: MetricsRegistry, name: String, entries: String, option: String,
                                      lookups: @escaping @Sendable () -> CacheLookups,
                                      bytes: @escaping @Sendable () -> Int, limit: Int) {
        let prefix = "tessera_\(name)"
        registry.counter("\(prefix)_hits_total", help: "Lookups of \(entries) answered from the cache.") {
            Double(lookups().hits)
        }
        registry.counter("\(prefix)_coalesced_total",
                         help: "Lookups of \(entries) answered by waiting for an identical one being made.") {
            Double(lookups().coalesced)
        }
        registry.counter("\(prefix)_misses_total", help: "Lookups of \(entries) that had to make them.") {
            Double(lookups().misses)
        }
        registry.gauge("\(prefix)_bytes", help: "Memory the \(entries) kept hold.") { Double(bytes()) }
        registry.gauge("\(prefix)_limit_bytes", help: "The most memory the \(entries) kept may hold (\(option)).") {
            Double(limit)
        }
    }

    private static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
