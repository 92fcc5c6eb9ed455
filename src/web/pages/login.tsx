import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { setCsrfToken, trpc } from "../api.ts";
import { ErrorNote, Field } from "../ui.tsx";

export function LoginPage() {
  const qc = useQueryClient();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const login = useMutation({
    mutationKey: ["login"],
    mutationFn: () => trpc.auth.login.mutate({ email, password }),
    onSuccess: (r) => {
      setCsrfToken(r.csrfToken);
      setPassword("");
      void qc.invalidateQueries({ queryKey: ["me"] });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    login.mutate();
  };
  return (
    <main className="login">
      <form className="card login-card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">
          <svg viewBox="0 0 16 16" width="22" height="22" aria-hidden="true">
            <path d="M3 1v14" stroke="currentColor" strokeWidth="2" />
            <path d="M4 2h9l-2 3 2 3H4z" fill="#d9480f" />
          </svg>
          Sign in to Flagstaff
        </h1>
        <Field label="Email">
          <input type="email" name="email" autoComplete="username" required autoFocus value={email} onChange={(e) => setEmail(e.target.value)} />
        </Field>
        <Field label="Password">
          <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <ErrorNote error={login.error} />
        <button type="submit" className="primary" disabled={login.isPending}>
          {login.isPending ? "Signing in…" : "Sign in"}
        </button>
        <p className="muted small-print">The first admin login is printed once by <code>flagstaff init</code> or the first <code>flagstaff serve</code>.</p>
      </form>
    </main>
  );
}
