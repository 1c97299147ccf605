/** Every text of the page's interface. */
export interface UiStrings {
  title: string;
  placeholder: string;
  inputLabel: string;
  send: string;
  starting: string;
  thinking: string;
  you: string;
  assistant: string;
  notFound: string;
  unavailable: string;
  forbidden: string;
  disabled: string;
  cooldown: string;
  retryIn: string;
  tooLong: string;
  rateLimited: string;
  failed: string;
  noReply: string;
  conversationEnded: string;
  voiceOn: string;
  voiceOff: string;
}

const en: UiStrings = {
  title: 'Chat',
  placeholder: 'Type your message…',
  inputLabel: 'Your message',
  send: 'Send',
  starting: 'Starting the conversation…',
  thinking: 'Thinking…',
  you: 'You',
  assistant: 'Assistant',
  notFound: 'This link does not exist.',
  unavailable: 'This conversation is currently unavailable. Please try again later.',
  forbidden: 'This conversation is not available from your network.',
  disabled: 'This link is no longer active.',
  cooldown: 'You have reached the limit for now. Please come back later.',
  retryIn: 'You can try again in {minutes} min.',
  tooLong: 'This message is too long.',
  rateLimited: 'You are sending messages too quickly. Please wait a moment.',
  failed: 'Something went wrong. Please try again.',
  noReply: 'The assistant could not answer just now. Please send your message again.',
  conversationEnded: 'This conversation has ended. Reload the page to start a new one.',
  voiceOn: 'Read replies aloud',
  voiceOff: 'Stop reading replies aloud',
};

const de: UiStrings = {
  title: 'Chat',
  placeholder: 'Nachricht eingeben…',
  inputLabel: 'Ihre Nachricht',
  send: 'Senden',
  starting: 'Gespräch wird gestartet…',
  thinking: 'Einen Moment…',
  you: 'Sie',
  assistant: 'Assistent',
  notFound: 'Diesen Link gibt es nicht.',
  unavailable: 'Dieses Gespräch ist derzeit nicht verfügbar. Bitte versuchen Sie es später erneut.',
  forbidden: 'Dieses Gespräch ist aus Ihrem Netzwerk nicht verfügbar.',
  disabled: 'Dieser Link ist nicht mehr aktiv.',
  cooldown: 'Sie haben das Limit vorerst erreicht. Bitte kommen Sie später wieder.',
  retryIn: 'Sie können es in {minutes} Min. erneut versuchen.',
  tooLong: 'Diese Nachricht ist zu lang.',
  rateLimited: 'Sie senden Nachrichten zu schnell. Bitte warten Sie einen Moment.',
  failed: 'Etwas ist schiefgelaufen. Bitte versuchen Sie es erneut.',
  noReply: 'Der Assistent konnte gerade nicht antworten. Bitte senden Sie Ihre Nachricht erneut.',
  conversationEnded: 'Dieses Gespräch ist beendet. Laden Sie die Seite neu, um ein neues zu beginnen.',
  voiceOn: 'Antworten vorlesen',
  voiceOff: 'Vorlesen beenden',
};

const fr: UiStrings = {
  title: 'Discussion',
  placeholder: 'Écrivez votre message…',
  inputLabel: 'Votre message',
  send: 'Envoyer',
  starting: 'Démarrage de la conversation…',
  thinking: 'Un instant…',
  you: 'Vous',
  assistant: 'Assistant',
  notFound: "Ce lien n'existe pas.",
  unavailable: 'Cette conversation est momentanément indisponible. Veuillez réessayer plus tard.',
  forbidden: "Cette conversation n'est pas disponible depuis votre réseau.",
  disabled: "Ce lien n'est plus actif.",
  cooldown: 'Vous avez atteint la limite pour le moment. Veuillez revenir plus tard.',
  retryIn: 'Vous pourrez réessayer dans {minutes} min.',
  tooLong: 'Ce message est trop long.',
  rateLimited: 'Vous envoyez des messages trop vite. Veuillez patienter un instant.',
  failed: "Une erreur s'est produite. Veuillez réessayer.",
  noReply: "L'assistant n'a pas pu répondre pour le moment. Veuillez renvoyer votre message.",
  conversationEnded: 'Cette conversation est terminée. Rechargez la page pour en commencer une nouvelle.',
  voiceOn: 'Lire les réponses à voix haute',
  voiceOff: 'Arrêter la lecture à voix haute',
};

const es: UiStrings = {
  title: 'Chat',
  placeholder: 'Escribe tu mensaje…',
  inputLabel: 'Tu mensaje',
  send: 'Enviar',
  starting: 'Iniciando la conversación…',
  thinking: 'Un momento…',
  you: 'Tú',
  assistant: 'Asistente',
  notFound: 'Este enlace no existe.',
  unavailable: 'Esta conversación no está disponible en este momento. Inténtalo más tarde.',
  forbidden: 'Esta conversación no está disponible desde tu red.',
  disabled: 'Este enlace ya no está activo.',
  cooldown: 'Has alcanzado el límite por ahora. Vuelve más tarde.',
  retryIn: 'Podrás volver a intentarlo en {minutes} min.',
  tooLong: 'Este mensaje es demasiado largo.',
  rateLimited: 'Estás enviando mensajes demasiado rápido. Espera un momento.',
  failed: 'Algo salió mal. Inténtalo de nuevo.',
  noReply: 'El asistente no ha podido responder ahora. Vuelve a enviar tu mensaje.',
  conversationEnded: 'Esta conversación ha terminado. Recarga la página para empezar una nueva.',
  voiceOn: 'Leer las respuestas en voz alta',
  voiceOff: 'Dejar de leer en voz alta',
};

/** The shipped interface languages by primary subtag. */
export const UI_STRINGS: Readonly<Record<string, UiStrings>> = { en, de, fr, es };

function primary(tag: string): string {
  return tag.trim().toLowerCase().split(/[-_]/)[0];
}

/** Parses Accept-Language into tags, best first (q=0 dropped, ties keep the header's order). */
export function parseAcceptLanguage(header: string): string[] {
  return header
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { tag: tag.trim(), q: q ? Number(q.slice(2)) : 1, index };
    })
    .filter((l) => l.tag !== '' && l.tag !== '*' && Number.isFinite(l.q) && l.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((l) => l.tag);
}

/**
 * The page language: the visitor's most preferred language among the device's languages
 * (exact tag first, then primary subtag), else the device's default. The interface strings
 * follow it, falling back to English for a language not shipped.
 */
export function pickLanguage(
  acceptLanguage: string,
  device: { languages: readonly string[]; defaultLanguage: string } | undefined,
): { lang: string; strings: UiStrings } {
  const offered =
    device && device.languages.length > 0 ? device.languages : [device?.defaultLanguage || 'en'];
  let lang = device?.defaultLanguage || offered[0];
  for (const wanted of parseAcceptLanguage(acceptLanguage)) {
    const exact = offered.find((o) => o.toLowerCase() === wanted.toLowerCase());
    const loose = exact ?? offered.find((o) => primary(o) === primary(wanted));
    if (loose) {
      lang = loose;
      break;
    }
  }
  return { lang, strings: UI_STRINGS[primary(lang)] ?? en };
}
