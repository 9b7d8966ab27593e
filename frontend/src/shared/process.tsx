// Process models shared by the two process widgets: outcomes, command lines, the fields table.
import { Fields, Time, seconds } from "./ui";

export interface ProcessInfo {
  summary: {
    process_id: number;
    executable: string;
    arguments: string[];
    cwd: string;
    encoding: string;
    timeout: { total: number | null; idle: number | null };
  };
  status: {
    pid: number;
    started: string;
    work_time: number;
    current_status: number | "running" | "interrupted" | "stopped" | "stream_failure";
  };
}

/** The outcome sentence and its pill class. */
export function outcome(status: ProcessInfo["status"]["current_status"]): [string, string] {
  if (status === 0) return ["Completed successfully", "ok"];
  if (typeof status === "number") return [`Exited with code ${status}`, "bad"];
  return {
    running: ["Running", "warn"],
    interrupted: ["Interrupted by timeout", "bad"],
    stopped: ["Stopped", "muted"],
    stream_failure: ["Stream failure", "bad"],
  }[status] as [string, string];
}

const quote = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);
export const commandLine = (p: ProcessInfo) => [p.summary.executable, ...p.summary.arguments].map(quote).join(" ");

export const Outcome = ({ info }: { info: ProcessInfo }) => {
  const [text, cls] = outcome(info.status.current_status);
  return <span class={`pill ${cls}`}>{text}</span>;
};

const limit = (s: number | null) => (s === null ? "None" : `${s} s`);

export function ProcessFields({ info }: { info: ProcessInfo }) {
  const { summary, status } = info;
  return (
    <Fields
      rows={[
        ["Process", String(summary.process_id)],
        ["Outcome", outcome(status.current_status)[0]],
        ["PID", String(status.pid)],
        ["Started", <Time iso={status.started} />, status.started],
        ["Work time", seconds(status.work_time), String(status.work_time)],
        ["Executable", summary.executable, summary.executable],
        ["Arguments", summary.arguments.length ? summary.arguments.map((a, i) => `${i + 1}. ${a}`).join("\n") : "None", JSON.stringify(summary.arguments)],
        ["Command line", commandLine(info), commandLine(info)],
        ["Working directory", summary.cwd, summary.cwd],
        ["Encoding", summary.encoding],
        ["Total timeout", limit(summary.timeout.total)],
        ["Idle timeout", limit(summary.timeout.idle)],
      ]}
    />
  );
}
