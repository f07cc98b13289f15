/** One chat message to send through a chat cloud API. */
export interface ChatMessage {
  baseUrl: string;
  token: string;
  phoneNumberId: string;
  /** Recipient, digits only (international format without +). */
  to: string;
  text: string;
}

export interface ChatSendResult {
  providerMessageId: string | null;
}

/** A failed send; `retryable` tells the worker whether to try again later (network, 408, 429, 5xx). */
export class ChatSendError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'ChatSendError';
  }
}

/** How the outbox worker talks to a chat provider in `cloud_api` mode. */
export interface ChatSender {
  send(message: ChatMessage): Promise<ChatSendResult>;
}

/** Click-to-chat link with the text prefilled (`link` mode). */
export function clickToChatLink(phone: string, text: string): string {
  return `https://wa.me/${phone.replace(/\D/g, '')}?text=${encodeURIComponent(text)}`;
}

/**
 * The real sender: `POST <baseUrl>/<phone_number_id>/messages` with `Authorization: Bearer <token>` and a
 * cloud-API text message body; the provider's message id is read from `messages[0].id`.
 */
export function createHttpChatSender(opts: { timeoutMs: number }): ChatSender {
  return {
    async send(m) {
      const url = `${m.baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(m.phoneNumberId)}/messages`;
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${m.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            messaging_product: 'whatsapp',
            recipient_type: 'individual',
            to: m.to,
            type: 'text',
            text: { preview_url: false, body: m.text },
          }),
          signal: AbortSignal.timeout(opts.timeoutMs),
          redirect: 'error',
        });
      } catch (err) {
        throw new ChatSendError(
          `chat API unreachable: ${(err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message}`,
          true,
        );
      }
      const text = await res.text().catch(() => '');
      if (!res.ok) {
        const retryable = res.status >= 500 || res.status === 408 || res.status === 429;
        throw new ChatSendError(`chat API answered ${res.status}: ${text.slice(0, 300)}`, retryable);
      }
      let id: string | null = null;
      try {
        const body = JSON.parse(text) as { messages?: { id?: unknown }[] };
        id = typeof body.messages?.[0]?.id === 'string' ? body.messages[0].id : null;
      } catch {
        /* a 2xx without a JSON body still means accepted */
      }
      return { providerMessageId: id };
    },
  };
}
