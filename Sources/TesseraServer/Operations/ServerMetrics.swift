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
        registry.counter("tessera_response_cache_hits_total", help: "Rendered responses answered from the cache.") {
            Double(responses.lookups.hits)
        }
        registry.counter("tessera_response_cache_coalesced_total",
                         help: "Rendered responses answered by waiting for an identical render in flight.") {
            Double(responses.lookups.coalesced)
        }
        registry.counter("tessera_response_cache_misses_total", help: "Rendered responses that had to be rendered.") {
            Double(responses.lookups.misses)
        }
        registry.gauge("tessera_response_cache_bytes", help: "Memory the cached responses hold.") {
            Double(responses.usage.bytes)
        }
        registry.gauge("tessera_response_cache_limit_bytes", help: "The response cache's limit (--response-cache).") {
            Double(responses.byteLimit)
        }
        let tiles = service.decodedTiles
        registry.counter("tessera_decoded_tiles_hits_total", help: "JPEG 2000 tiles read from the decoded tiles kept.") {
            Double(tiles.lookups.hits)
        }
        registry.counter("tessera_decoded_tiles_coalesced_total",
                         help: "JPEG 2000 tiles read by waiting for another request's decode of them.") {
            Double(tiles.lookups.coalesced)
        }
        registry.counter("tessera_decoded_tiles_misses_total", help: "JPEG 2000 tiles decoded whole for a request.") {
            Double(tiles.lookups.misses)
        }
        registry.gauge("tessera_decoded_tiles_bytes", help: "Memory the decoded JPEG 2000 tiles kept hold.") {
            Double(tiles.usage.bytes)
        }
        registry.gauge("tessera_decoded_tiles_limit_bytes", help: "The decoded tiles' limit (--decoded-tiles).") {
            Double(tiles.byteLimit)
        }
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
    private static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
