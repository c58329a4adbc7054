;;; eglot_client.el --- drive Emacs 28 + eglot 1.9 against shardls  -*- lexical-binding: t -*-

;; Does in batch Emacs what a user's set-up does: open a Python file in python-mode, start
;; eglot with shardls (and initializationOptions) from `eglot-server-programs', wait for the
;; diagnostics to reach Flymake, ask for the hover eldoc shows, delete a line, and write what
;; Emacs saw to a JSON file that test_editor_eglot.py checks.
;;
;; Run without -Q (Debian's site-start puts eglot on the load path):
;;   SHARDLS_EDITOR_JOB=job.json emacs --batch -l eglot_client.el
;; job.json holds {file, cmd, hover: {line, character}, edit_line, result, timeout_ms} and the
;; settings as `initialization_options' (sent with `initialize') or `workspace_configuration'
;; (what eglot answers workspace/configuration with, usually a directory-local variable).
;;
;; Two things differ from an interactive session, both because batch Emacs is never idle:
;; `eglot-ensure' (a hook) never fires, so eglot is started with (eglot--guess-contact) as
;; M-x eglot does, and the idle timer that sends didChange never runs, so the script calls
;; what that timer calls.

(require 'cl-lib)
(require 'json)
(require 'flymake)
(require 'python)
;; eglot itself is loaded in `shardls-run', so that its absence is reported in the result file.
(declare-function eglot "eglot")
(declare-function eglot--guess-contact "eglot")
(defvar eglot-server-programs)
(defvar eglot-workspace-configuration)
(defvar eglot--managed-mode)

(defvar shardls-job
  (with-temp-buffer
    (insert-file-contents (getenv "SHARDLS_EDITOR_JOB"))
    (json-parse-buffer :object-type 'plist :array-type 'array)))

(defvar shardls-result (list :publishes []))
(defvar shardls-started (float-time))

(defun shardls-ms ()
  (round (* 1000 (- (float-time) shardls-started))))

(defun shardls-put (key value)
  (setq shardls-result (plist-put shardls-result key value)))

(defun shardls-wait (predicate)
  "Let Emacs read the server until PREDICATE holds or the job's timeout passes; the result."
  (let ((deadline (+ (float-time) (/ (plist-get shardls-job :timeout_ms) 1000.0)))
        (done nil))
    (while (and (not (setq done (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (and done t)))

(defun shardls-diagnostics ()
  "What Flymake holds for this buffer: code, 0-based line, type and text of each diagnostic."
  (flymake-start)  ; runs eglot's backend, which hands over what the server published
  (vconcat
   (mapcar (lambda (d)
             (let ((lsp (alist-get 'eglot-lsp-diag (flymake-diagnostic-data d))))
               (list :code (or (plist-get lsp :code) :null)
                     :line (1- (line-number-at-pos (flymake-diagnostic-beg d)))
                     :type (symbol-name (flymake-diagnostic-type d))
                     :text (flymake-diagnostic-text d))))
           (flymake-diagnostics))))

(defun shardls-has-code (code)
  (cl-some (lambda (d) (equal (plist-get d :code) code)) (shardls-diagnostics)))

(defun shardls-record-publish (_server method &rest params)
  "Keep the codes of every publishDiagnostics, to explain a failure."
  (when (eq method 'textDocument/publishDiagnostics)
    (shardls-put :publishes
                 (vconcat (plist-get shardls-result :publishes)
                          (vector (list :ms (shardls-ms)
                                        :codes (vconcat
                                                (mapcar (lambda (d) (or (plist-get d :code) :null))
                                                        (plist-get params :diagnostics)))))))))

(defun shardls-hover ()
  "The hover eldoc would show at point, through eglot's own eldoc function."
  (let ((info nil) (answered nil))
    (eglot-hover-eldoc-function (lambda (text &rest _) (setq info text answered t)))
    (shardls-wait (lambda () answered))
    info))

(defun shardls-run ()
  (unless (require 'eglot nil t)
    (error "eglot is not installed: apt-get install -y elpa-eglot"))
  (let* ((cmd (append (plist-get shardls-job :cmd) nil))
         (hover (plist-get shardls-job :hover)))
    (setq eglot-server-programs
          (if-let ((options (plist-get shardls-job :initialization_options)))
              `((python-mode . (,@cmd :initializationOptions ,options)))
            `((python-mode . ,cmd))))
    (setq-default eglot-workspace-configuration (plist-get shardls-job :workspace_configuration))
    (advice-add 'eglot-handle-notification :before #'shardls-record-publish)
    (find-file (plist-get shardls-job :file))
    (shardls-put :major_mode (symbol-name major-mode))
    (apply #'eglot (eglot--guess-contact))
    (shardls-put :managed (and eglot--managed-mode t))
    (shardls-put :diagnostics_arrived
                 (shardls-wait (lambda () (and (shardls-has-code "SH001")
                                               (not (shardls-has-code "SH005"))))))
    (shardls-put :diagnostics (shardls-diagnostics))
    ;; Hover on the spec.
    (goto-char (point-min))
    (forward-line (plist-get hover :line))
    (forward-char (plist-get hover :character))
    (shardls-put :hover_provider (and (eglot--server-capable :hoverProvider) t))
    (shardls-put :hover (or (shardls-hover) :null))
    ;; Delete the indivisible line; its diagnostic must go.
    (goto-char (point-min))
    (forward-line (plist-get shardls-job :edit_line))
    (delete-region (point) (line-beginning-position 2))
    (eglot--signal-textDocument/didChange)
    (shardls-put :cleared_after_edit
                 (shardls-wait (lambda () (not (shardls-has-code "SH001")))))
    (shardls-put :diagnostics_after_edit (shardls-diagnostics))
    (set-buffer-modified-p nil)
    (eglot-shutdown (eglot-current-server))
    (shardls-put :stopped t)))

(let ((outcome (condition-case err
                   (progn (shardls-run) nil)
                 (error (format "%S" err)))))
  (shardls-put :ok (if outcome :false t))
  (shardls-put :error (or outcome :null))
  (shardls-put :ms (shardls-ms))
  (with-temp-file (plist-get shardls-job :result)
    (insert (json-serialize shardls-result)))
  (kill-emacs (if outcome 1 0)))

;;; eglot_client.el ends here
