import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchConfig
import MonarchLoop
import MonarchWire

/// `monarch get`: one request through the cluster.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Fetch one resource through the coordinator and print its body.",
        discussion: """
            The coordinator's address comes from --address, else MONARCH_ADDRESS, else the \
            first client address of the configuration: --config, else ./monarch.yml, else the \
            embedded default (relative paths from the working directory). \
            -X, -H and --data make any request, a mutation too: \
            monarch get notes -X POST -H content-type:application/json --data '{"text":"hi"}'. \
            When no provider answers, prints the aggregated error on standard error and exits 1; \
            when the coordinator cannot be reached, exits 2; an invalid option value exits 64; an invalid configuration exits 78. \
            With --json every answer and error is one JSON object on standard output, and \
            nothing is written to standard error.
            """
    )

    @Argument(help: "The resource's path, such as docs/hello.txt (a leading / also works; a URL naming a host is refused).")
    var path: String

    @Option(help: "The domain whose chain serves the request (default: the route's).")
    var domain: String?

    @Option(help: "Cache policy: cacheFirst, networkFirst, cacheThenRefresh or noCache.")
    var policy: CachePolicy?

    @Option(help: "How long to wait for an answer, such as 500ms or 5s (default: the route's, else 30s).")
    var deadline: String?

    @Flag(help: "Print one JSON object: status, source, headers, body (or bodyBase64), or the error.")
    var json = false

    @Option(name: [.customShort("X"), .long], help: "The request method, such as POST or DELETE (default: GET).")
    var method: String?

    @Option(name: [.customShort("H"), .long], help: ArgumentHelp(
        "A request header, NAME:VALUE (repeatable).", discussion: "A header given twice is sent once, its values joined by \", \"."))
    var header: [String] = []

    @Option(help: ArgumentHelp(
        "The request body: the text itself, @FILE for a file's bytes, or @- for standard input.",
        discussion: "With --data and no -X, the method is POST."))
    var data: String?

    @OptionGroup var coordinator: CoordinatorOptions

    func run() async throws {
        _ = coordinator.config.startProcess()
        if let problem = ResourceArgument.problem(with: path) {
            GetOutput.reportUsage(problem, json: json)
            throw ExitCode.validationFailure
        }
        var request = Request(path: path, domain: domain.map { RequestDomain($0) } ?? .any, policy: policy)
        do {
            try RequestOptions.apply(method: method, headers: header, data: data, to: &request)
        } catch {
            GetOutput.reportUsage("\(error)", json: json)
            throw ExitCode.validationFailure
        }
        if let deadline {
            guard let duration = parseDuration(deadline) else {
                GetOutput.reportUsage("--deadline: expected a duration such as 500ms or 5s, got \"\(deadline)\"", json: json)
                throw ExitCode.validationFailure
            }
            request.deadline = duration
        }
        let client: MonarchClient
        do {
            client = try await coordinator.connect()
        } catch let error as MonarchError {
            GetOutput.report(error, json: json)
            throw ExitCode(2)
        } catch let problem as ConfigurationProblem {
            GetOutput.reportConfigurationProblem(problem, json: json)
            throw ExitCode(ConfigurationProblem.exitStatus)
        } catch {
            // The configuration or the address did not do.
            GetOutput.reportUsage("\(error)", json: json)
            throw ExitCode.validationFailure
        }
        let answer: Result<Response, MonarchError>
        do {
            answer = .success(try await client.perform(request))
        } catch {
            answer = .failure(error)
        }
        await client.close()
        switch answer {
        case .success(let response):
            GetOutput.print(response, json: json)
        case .failure(let error):
            GetOutput.report(error, json: json)
            if error.chainError != nil { throw ExitCode.failure }
            throw ExitCode(2)
        }
    }
}

extension CachePolicy: ExpressibleByArgument {}
