import { LINK_PAGE_TITLES, type LinkPageLanguage, linkPageTextLanguage } from '@outreach/contracts';

/** Every text of the page's interface. */
export interface UiStrings {
  title: string;
  placeholder: string;
  /** Shown until the first message: the conversation starts with it. */
  intro: string;
  inputLabel: string;
  send: string;
  starting: string;
  thinking: string;
  /** Said when a message is sent while the previous one still awaits its reply. */
  waitForReply: string;
  you: string;
  assistant: string;
  notFound: string;
  unavailable: string;
  forbidden: string;
  /** A link disabled or used up, where the operator wrote no message of their own. */
  disabled: string;
  /**
   * Unavailable where retrying will not help (the campaign ended or was halted, the budget is used
   * up): still the neutral currently-unavailable text, but saying whom to turn to, not to try again.
   */
  unavailableContact: string;
  cooldown: string;
  /** When a visitor may try again; `{time}` is filled in by `retryInText`. */
  retryIn: string;
  tooLong: string;
  /** The longest message, said after tooLong; `{max}` is the number of characters. */
  atMost: string;
  rateLimited: string;
  failed: string;
  /** A message that could not be sent while the browser says it is offline. */
  offline: string;
  noReply: string;
  conversationEnded: string;
  readAloud: string;
  /** Shown where the browser runs no script, which the chat needs. */
  noScript: string;
}

const en: UiStrings = {
  title: LINK_PAGE_TITLES.en,
  placeholder: 'Type your message…',
  intro: 'Send a message to start the conversation.',
  inputLabel: 'Your message',
  send: 'Send',
  starting: 'Starting the conversation…',
  thinking: 'Thinking…',
  waitForReply: 'Please wait for the reply before sending your next message.',
  you: 'You',
  assistant: 'Assistant',
  notFound: 'This link does not exist.',
  unavailable: 'This conversation is currently unavailable. Please try again later.',
  forbidden: 'This conversation is not available from your network.',
  disabled: 'This link is no longer active. If you need help, please contact the sender of this link.',
  unavailableContact:
    'This conversation is currently unavailable. If you still need help, please contact the sender of this link.',
  cooldown: 'You have reached the limit for now. Please come back later.',
  retryIn: 'You can try again in {time}.',
  tooLong: 'This message is too long.',
  atMost: 'Use at most {max} characters.',
  rateLimited: 'You are sending messages too quickly. Please wait a moment.',
  failed: 'Something went wrong. Please try again.',
  offline: 'You appear to be offline. Check your connection and send your message again.',
  noReply: 'The assistant could not answer just now. Please send your message again.',
  conversationEnded: 'This conversation has ended. Send your message again to start a new one.',
  readAloud: 'Read replies aloud',
  noScript: "This chat needs JavaScript. Please turn it on in your browser's settings, then reload the page.",
};

const de: UiStrings = {
  title: LINK_PAGE_TITLES.de,
  placeholder: 'Nachricht eingeben…',
  intro: 'Senden Sie eine Nachricht, um das Gespräch zu beginnen.',
  inputLabel: 'Ihre Nachricht',
  send: 'Senden',
  starting: 'Gespräch wird gestartet…',
  thinking: 'Einen Moment…',
  waitForReply: 'Bitte warten Sie die Antwort ab, bevor Sie die nächste Nachricht senden.',
  you: 'Sie',
  assistant: 'Assistent',
  notFound: 'Diesen Link gibt es nicht.',
  unavailable: 'Dieses Gespräch ist derzeit nicht verfügbar. Bitte versuchen Sie es später erneut.',
  forbidden: 'Dieses Gespräch ist aus Ihrem Netzwerk nicht verfügbar.',
  disabled:
    'Dieser Link ist nicht mehr aktiv. Wenn Sie Hilfe benötigen, wenden Sie sich bitte an den Absender dieses Links.',
  unavailableContact:
    'Dieses Gespräch ist derzeit nicht verfügbar. Wenn Sie weiterhin Hilfe benötigen, wenden Sie sich bitte an den Absender dieses Links.',
  cooldown: 'Sie haben das Limit vorerst erreicht. Bitte kommen Sie später wieder.',
  retryIn: 'Sie können es in {time} erneut versuchen.',
  tooLong: 'Diese Nachricht ist zu lang.',
  atMost: 'Höchstens {max} Zeichen.',
  rateLimited: 'Sie senden Nachrichten zu schnell. Bitte warten Sie einen Moment.',
  failed: 'Etwas ist schiefgelaufen. Bitte versuchen Sie es erneut.',
  offline: 'Sie scheinen offline zu sein. Prüfen Sie Ihre Verbindung und senden Sie Ihre Nachricht erneut.',
  noReply: 'Der Assistent konnte gerade nicht antworten. Bitte senden Sie Ihre Nachricht erneut.',
  conversationEnded:
    'Dieses Gespräch ist beendet. Senden Sie Ihre Nachricht erneut, um ein neues zu beginnen.',
  readAloud: 'Antworten vorlesen',
  noScript:
    'Dieser Chat braucht JavaScript. Bitte aktivieren Sie es in den Einstellungen Ihres Browsers und laden Sie die Seite neu.',
};

const fr: UiStrings = {
  title: LINK_PAGE_TITLES.fr,
  placeholder: 'Écrivez votre message…',
  intro: 'Envoyez un message pour commencer la conversation.',
  inputLabel: 'Votre message',
  send: 'Envoyer',
  starting: 'Démarrage de la conversation…',
  thinking: 'Un instant…',
  waitForReply: "Veuillez attendre la réponse avant d'envoyer votre prochain message.",
  you: 'Vous',
  assistant: 'Assistant',
  notFound: "Ce lien n'existe pas.",
  unavailable: 'Cette conversation est momentanément indisponible. Veuillez réessayer plus tard.',
  forbidden: "Cette conversation n'est pas disponible depuis votre réseau.",
  disabled:
    "Ce lien n'est plus actif. Si vous avez besoin d'aide, veuillez contacter l'expéditeur de ce lien.",
  unavailableContact:
    "Cette conversation est momentanément indisponible. Si vous avez encore besoin d'aide, veuillez contacter l'expéditeur de ce lien.",
  cooldown: 'Vous avez atteint la limite pour le moment. Veuillez revenir plus tard.',
  retryIn: 'Vous pourrez réessayer dans {time}.',
  tooLong: 'Ce message est trop long.',
  atMost: '{max} caractères au maximum.',
  rateLimited: 'Vous envoyez des messages trop vite. Veuillez patienter un instant.',
  failed: "Une erreur s'est produite. Veuillez réessayer.",
  offline: 'Vous semblez être hors ligne. Vérifiez votre connexion et renvoyez votre message.',
  noReply: "L'assistant n'a pas pu répondre pour le moment. Veuillez renvoyer votre message.",
  conversationEnded:
    'Cette conversation est terminée. Renvoyez votre message pour en commencer une nouvelle.',
  readAloud: 'Lire les réponses à voix haute',
  noScript:
    "Cette discussion nécessite JavaScript. Veuillez l'activer dans les réglages de votre navigateur, puis recharger la page.",
};

const es: UiStrings = {
  title: LINK_PAGE_TITLES.es,
  placeholder: 'Escribe tu mensaje…',
  intro: 'Envía un mensaje para empezar la conversación.',
  inputLabel: 'Tu mensaje',
  send: 'Enviar',
  starting: 'Iniciando la conversación…',
  thinking: 'Un momento…',
  waitForReply: 'Espera la respuesta antes de enviar tu siguiente mensaje.',
  you: 'Tú',
  assistant: 'Asistente',
  notFound: 'Este enlace no existe.',
  unavailable: 'Esta conversación no está disponible en este momento. Inténtalo más tarde.',
  forbidden: 'Esta conversación no está disponible desde tu red.',
  disabled:
    'Este enlace ya no está activo. Si necesitas ayuda, ponte en contacto con quien te envió este enlace.',
  unavailableContact:
    'Esta conversación no está disponible en este momento. Si todavía necesitas ayuda, ponte en contacto con quien te envió este enlace.',
  cooldown: 'Has alcanzado el límite por ahora. Vuelve más tarde.',
  retryIn: 'Podrás volver a intentarlo en {time}.',
  tooLong: 'Este mensaje es demasiado largo.',
  atMost: 'Como máximo {max} caracteres.',
  rateLimited: 'Estás enviando mensajes demasiado rápido. Espera un momento.',
  failed: 'Algo salió mal. Inténtalo de nuevo.',
  offline: 'Parece que no tienes conexión. Compruébala y vuelve a enviar tu mensaje.',
  noReply: 'El asistente no ha podido responder ahora. Vuelve a enviar tu mensaje.',
  conversationEnded: 'Esta conversación ha terminado. Vuelve a enviar tu mensaje para empezar una nueva.',
  readAloud: 'Leer las respuestas en voz alta',
  noScript:
    'Este chat necesita JavaScript. Actívalo en la configuración de tu navegador y vuelve a cargar la página.',
};

// Where a language has a formal address in everyday use (it, nl, pt, cs, tr) the texts use it,
// as de does with "Sie". Polish texts avoid the gendered "Pan/Pani" with impersonal forms; in
// the Nordic languages the formal pronouns are out of use, so "du" / "sinä" is the neutral tone.
const it: UiStrings = {
  title: LINK_PAGE_TITLES.it,
  placeholder: 'Scriva il suo messaggio…',
  intro: 'Invii un messaggio per iniziare la conversazione.',
  inputLabel: 'Il suo messaggio',
  send: 'Invia',
  starting: 'Avvio della conversazione…',
  thinking: 'Un momento…',
  waitForReply: 'Attenda la risposta prima di inviare il messaggio successivo.',
  you: 'Lei',
  assistant: 'Assistente',
  notFound: 'Questo link non esiste.',
  unavailable: 'Questa conversazione non è al momento disponibile. Riprovi più tardi.',
  forbidden: 'Questa conversazione non è disponibile dalla sua rete.',
  disabled: 'Questo link non è più attivo. Se ha bisogno di aiuto, contatti il mittente di questo link.',
  unavailableContact:
    'Questa conversazione non è al momento disponibile. Se ha ancora bisogno di aiuto, contatti il mittente di questo link.',
  cooldown: 'Per il momento ha raggiunto il limite. Torni più tardi.',
  retryIn: 'Potrà riprovare tra {time}.',
  tooLong: 'Questo messaggio è troppo lungo.',
  atMost: 'Al massimo {max} caratteri.',
  rateLimited: 'Sta inviando messaggi troppo velocemente. Attenda un momento.',
  failed: 'Si è verificato un problema. Riprovi.',
  offline: 'Sembra che non sia connesso. Controlli la connessione e invii di nuovo il messaggio.',
  noReply: "L'assistente non è riuscito a rispondere in questo momento. Invii di nuovo il messaggio.",
  conversationEnded:
    'Questa conversazione è terminata. Invii di nuovo il suo messaggio per iniziarne una nuova.',
  readAloud: 'Leggi le risposte ad alta voce',
  noScript:
    'Questa chat richiede JavaScript. Lo attivi nelle impostazioni del browser e ricarichi la pagina.',
};

const nl: UiStrings = {
  title: LINK_PAGE_TITLES.nl,
  placeholder: 'Typ uw bericht…',
  intro: 'Stuur een bericht om het gesprek te beginnen.',
  inputLabel: 'Uw bericht',
  send: 'Verzenden',
  starting: 'Gesprek wordt gestart…',
  thinking: 'Een ogenblik…',
  waitForReply: 'Wacht op het antwoord voordat u uw volgende bericht verstuurt.',
  you: 'U',
  assistant: 'Assistent',
  notFound: 'Deze link bestaat niet.',
  unavailable: 'Dit gesprek is momenteel niet beschikbaar. Probeer het later opnieuw.',
  forbidden: 'Dit gesprek is niet beschikbaar vanaf uw netwerk.',
  disabled:
    'Deze link is niet meer actief. Hebt u hulp nodig, neem dan contact op met de afzender van deze link.',
  unavailableContact:
    'Dit gesprek is momenteel niet beschikbaar. Hebt u nog hulp nodig, neem dan contact op met de afzender van deze link.',
  cooldown: 'U hebt de limiet voorlopig bereikt. Kom later terug.',
  retryIn: 'U kunt het over {time} opnieuw proberen.',
  tooLong: 'Dit bericht is te lang.',
  atMost: 'Maximaal {max} tekens.',
  rateLimited: 'U verstuurt berichten te snel. Wacht een ogenblik.',
  failed: 'Er is iets misgegaan. Probeer het opnieuw.',
  offline: 'U lijkt offline te zijn. Controleer uw verbinding en verstuur uw bericht opnieuw.',
  noReply: 'De assistent kon nu niet antwoorden. Verstuur uw bericht opnieuw.',
  conversationEnded: 'Dit gesprek is beëindigd. Stuur uw bericht opnieuw om een nieuw gesprek te beginnen.',
  readAloud: 'Antwoorden voorlezen',
  noScript:
    'Deze chat heeft JavaScript nodig. Schakel het in via de instellingen van uw browser en laad de pagina opnieuw.',
};

// Worded to read naturally in both European and Brazilian Portuguese, which share the tag's primary subtag.
const pt: UiStrings = {
  title: LINK_PAGE_TITLES.pt,
  placeholder: 'Escreva a sua mensagem…',
  intro: 'Envie uma mensagem para iniciar a conversa.',
  inputLabel: 'A sua mensagem',
  send: 'Enviar',
  starting: 'A conversa vai começar…',
  thinking: 'Um momento…',
  waitForReply: 'Aguarde a resposta antes de enviar a sua próxima mensagem.',
  you: 'Você',
  assistant: 'Assistente',
  notFound: 'Este link não existe.',
  unavailable: 'Esta conversa está indisponível neste momento. Tente novamente mais tarde.',
  forbidden: 'Esta conversa não está disponível a partir da sua rede.',
  disabled: 'Este link já não está ativo. Se precisar de ajuda, fale com o remetente deste link.',
  unavailableContact:
    'Esta conversa está indisponível neste momento. Se ainda precisar de ajuda, fale com o remetente deste link.',
  cooldown: 'Atingiu o limite por agora. Volte mais tarde.',
  retryIn: 'Poderá tentar novamente dentro de {time}.',
  tooLong: 'Esta mensagem é muito longa.',
  atMost: 'No máximo {max} caracteres.',
  rateLimited: 'Enviou muitas mensagens em pouco tempo. Aguarde um momento.',
  failed: 'Ocorreu um erro. Tente novamente.',
  offline: 'Parece estar sem ligação. Verifique a sua ligação e envie a sua mensagem novamente.',
  noReply: 'O assistente não conseguiu responder agora. Envie a sua mensagem novamente.',
  conversationEnded: 'Esta conversa terminou. Envie a sua mensagem novamente para iniciar uma nova.',
  readAloud: 'Ler as respostas em voz alta',
  noScript: 'Este chat precisa de JavaScript. Ative-o no seu navegador e recarregue a página.',
};

const pl: UiStrings = {
  title: LINK_PAGE_TITLES.pl,
  placeholder: 'Wpisz wiadomość…',
  intro: 'Wyślij wiadomość, aby rozpocząć rozmowę.',
  inputLabel: 'Treść wiadomości',
  send: 'Wyślij',
  starting: 'Rozpoczynanie rozmowy…',
  thinking: 'Chwileczkę…',
  waitForReply: 'Prosimy poczekać na odpowiedź przed wysłaniem kolejnej wiadomości.',
  you: 'Ty',
  assistant: 'Asystent',
  notFound: 'Ten link nie istnieje.',
  unavailable: 'Ta rozmowa jest obecnie niedostępna. Prosimy spróbować ponownie później.',
  forbidden: 'Ta rozmowa nie jest dostępna z tej sieci.',
  disabled:
    'Ten link nie jest już aktywny. Jeśli potrzebna jest pomoc, prosimy skontaktować się z nadawcą tego linku.',
  unavailableContact:
    'Ta rozmowa jest obecnie niedostępna. Jeśli nadal potrzebna jest pomoc, prosimy skontaktować się z nadawcą tego linku.',
  cooldown: 'Limit został na razie wyczerpany. Prosimy wrócić później.',
  retryIn: 'Ponowna próba będzie możliwa za {time}.',
  tooLong: 'Ta wiadomość jest za długa.',
  atMost: 'Maksymalnie {max} znaków.',
  rateLimited: 'Wiadomości są wysyłane zbyt szybko. Prosimy chwilę poczekać.',
  failed: 'Coś poszło nie tak. Prosimy spróbować ponownie.',
  offline:
    'Wygląda na to, że nie ma połączenia z internetem. Prosimy sprawdzić połączenie i wysłać wiadomość ponownie.',
  noReply: 'Asystent nie mógł teraz odpowiedzieć. Prosimy wysłać wiadomość ponownie.',
  conversationEnded: 'Ta rozmowa została zakończona. Aby rozpocząć nową, prosimy wysłać wiadomość ponownie.',
  readAloud: 'Czytaj odpowiedzi na głos',
  noScript: 'Ten czat wymaga JavaScriptu. Prosimy włączyć go w ustawieniach przeglądarki i odświeżyć stronę.',
};

const sv: UiStrings = {
  title: LINK_PAGE_TITLES.sv,
  placeholder: 'Skriv ditt meddelande…',
  intro: 'Skicka ett meddelande för att starta samtalet.',
  inputLabel: 'Ditt meddelande',
  send: 'Skicka',
  starting: 'Startar samtalet…',
  thinking: 'Ett ögonblick…',
  waitForReply: 'Vänta på svaret innan du skickar nästa meddelande.',
  you: 'Du',
  assistant: 'Assistent',
  notFound: 'Den här länken finns inte.',
  unavailable: 'Det här samtalet är inte tillgängligt just nu. Försök igen senare.',
  forbidden: 'Det här samtalet är inte tillgängligt från ditt nätverk.',
  disabled: 'Den här länken är inte längre aktiv. Om du behöver hjälp kan du kontakta avsändaren av länken.',
  unavailableContact:
    'Det här samtalet är inte tillgängligt just nu. Om du fortfarande behöver hjälp kan du kontakta avsändaren av länken.',
  cooldown: 'Du har nått gränsen för tillfället. Välkommen tillbaka senare.',
  retryIn: 'Du kan försöka igen om {time}.',
  tooLong: 'Det här meddelandet är för långt.',
  atMost: 'Högst {max} tecken.',
  rateLimited: 'Du skickar meddelanden för snabbt. Vänta en stund.',
  failed: 'Något gick fel. Försök igen.',
  offline: 'Du verkar vara offline. Kontrollera din anslutning och skicka ditt meddelande igen.',
  noReply: 'Assistenten kunde inte svara just nu. Skicka ditt meddelande igen.',
  conversationEnded: 'Det här samtalet har avslutats. Skicka ditt meddelande igen för att starta ett nytt.',
  readAloud: 'Läs upp svaren',
  noScript: 'Den här chatten behöver JavaScript. Slå på det i webbläsarens inställningar och ladda om sidan.',
};

const da: UiStrings = {
  title: LINK_PAGE_TITLES.da,
  placeholder: 'Skriv din besked…',
  intro: 'Send en besked for at starte samtalen.',
  inputLabel: 'Din besked',
  send: 'Send',
  starting: 'Starter samtalen…',
  thinking: 'Et øjeblik…',
  waitForReply: 'Vent på svaret, før du sender din næste besked.',
  you: 'Du',
  assistant: 'Assistent',
  notFound: 'Dette link findes ikke.',
  unavailable: 'Denne samtale er ikke tilgængelig i øjeblikket. Prøv igen senere.',
  forbidden: 'Denne samtale er ikke tilgængelig fra dit netværk.',
  disabled:
    'Dette link er ikke længere aktivt. Hvis du har brug for hjælp, kan du kontakte afsenderen af linket.',
  unavailableContact:
    'Denne samtale er ikke tilgængelig i øjeblikket. Hvis du stadig har brug for hjælp, kan du kontakte afsenderen af linket.',
  cooldown: 'Du har nået grænsen for nu. Kom gerne tilbage senere.',
  retryIn: 'Du kan prøve igen om {time}.',
  tooLong: 'Denne besked er for lang.',
  atMost: 'Højst {max} tegn.',
  rateLimited: 'Du sender beskeder for hurtigt. Vent et øjeblik.',
  failed: 'Noget gik galt. Prøv igen.',
  offline: 'Du ser ud til at være offline. Tjek din forbindelse, og send din besked igen.',
  noReply: 'Assistenten kunne ikke svare lige nu. Send din besked igen.',
  conversationEnded: 'Denne samtale er afsluttet. Send din besked igen for at starte en ny.',
  readAloud: 'Læs svarene højt',
  noScript: 'Denne chat kræver JavaScript. Slå det til i din browsers indstillinger, og genindlæs siden.',
};

const nb: UiStrings = {
  title: LINK_PAGE_TITLES.nb,
  placeholder: 'Skriv meldingen din…',
  intro: 'Send en melding for å starte samtalen.',
  inputLabel: 'Meldingen din',
  send: 'Send',
  starting: 'Starter samtalen…',
  thinking: 'Et øyeblikk…',
  waitForReply: 'Vent på svaret før du sender neste melding.',
  you: 'Du',
  assistant: 'Assistent',
  notFound: 'Denne lenken finnes ikke.',
  unavailable: 'Denne samtalen er ikke tilgjengelig akkurat nå. Prøv igjen senere.',
  forbidden: 'Denne samtalen er ikke tilgjengelig fra nettverket ditt.',
  disabled: 'Denne lenken er ikke lenger aktiv. Hvis du trenger hjelp, kan du kontakte avsenderen av lenken.',
  unavailableContact:
    'Denne samtalen er ikke tilgjengelig akkurat nå. Hvis du fortsatt trenger hjelp, kan du kontakte avsenderen av lenken.',
  cooldown: 'Du har nådd grensen for nå. Kom gjerne tilbake senere.',
  retryIn: 'Du kan prøve igjen om {time}.',
  tooLong: 'Denne meldingen er for lang.',
  atMost: 'Maks {max} tegn.',
  rateLimited: 'Du sender meldinger for raskt. Vent et øyeblikk.',
  failed: 'Noe gikk galt. Prøv igjen.',
  offline: 'Du ser ut til å være frakoblet. Sjekk tilkoblingen og send meldingen din på nytt.',
  noReply: 'Assistenten kunne ikke svare akkurat nå. Send meldingen din på nytt.',
  conversationEnded: 'Denne samtalen er avsluttet. Send meldingen din på nytt for å starte en ny.',
  readAloud: 'Les opp svarene',
  noScript:
    'Denne chatten krever JavaScript. Slå det på i innstillingene til nettleseren din, og last inn siden på nytt.',
};

const fi: UiStrings = {
  title: LINK_PAGE_TITLES.fi,
  placeholder: 'Kirjoita viestisi…',
  intro: 'Aloita keskustelu lähettämällä viesti.',
  inputLabel: 'Viestisi',
  send: 'Lähetä',
  starting: 'Keskustelua aloitetaan…',
  thinking: 'Hetkinen…',
  waitForReply: 'Odota vastausta ennen kuin lähetät seuraavan viestin.',
  you: 'Sinä',
  assistant: 'Avustaja',
  notFound: 'Tätä linkkiä ei ole olemassa.',
  unavailable: 'Tämä keskustelu ei ole tällä hetkellä käytettävissä. Yritä myöhemmin uudelleen.',
  forbidden: 'Tämä keskustelu ei ole käytettävissä verkostasi.',
  disabled: 'Tämä linkki ei ole enää käytössä. Jos tarvitset apua, ota yhteyttä linkin lähettäjään.',
  unavailableContact:
    'Tämä keskustelu ei ole tällä hetkellä käytettävissä. Jos tarvitset vielä apua, ota yhteyttä linkin lähettäjään.',
  cooldown: 'Olet toistaiseksi saavuttanut rajan. Palaa myöhemmin uudelleen.',
  retryIn: 'Voit yrittää uudelleen {time} kuluttua.',
  tooLong: 'Tämä viesti on liian pitkä.',
  atMost: 'Enintään {max} merkkiä.',
  rateLimited: 'Lähetät viestejä liian nopeasti. Odota hetki.',
  failed: 'Jokin meni vikaan. Yritä uudelleen.',
  offline: 'Näyttää siltä, ettei sinulla ole verkkoyhteyttä. Tarkista yhteys ja lähetä viestisi uudelleen.',
  noReply: 'Avustaja ei pystynyt vastaamaan juuri nyt. Lähetä viestisi uudelleen.',
  conversationEnded: 'Tämä keskustelu on päättynyt. Aloita uusi lähettämällä viestisi uudelleen.',
  readAloud: 'Lue vastaukset ääneen',
  noScript:
    'Tämä keskustelu vaatii JavaScriptin. Ota se käyttöön selaimesi asetuksista ja lataa sivu uudelleen.',
};

const cs: UiStrings = {
  title: LINK_PAGE_TITLES.cs,
  placeholder: 'Napište svou zprávu…',
  intro: 'Pošlete zprávu a zahajte konverzaci.',
  inputLabel: 'Vaše zpráva',
  send: 'Odeslat',
  starting: 'Zahajování konverzace…',
  thinking: 'Okamžik…',
  waitForReply: 'Před odesláním další zprávy prosím počkejte na odpověď.',
  you: 'Vy',
  assistant: 'Asistent',
  notFound: 'Tento odkaz neexistuje.',
  unavailable: 'Tato konverzace je momentálně nedostupná. Zkuste to prosím později.',
  forbidden: 'Tato konverzace není z vaší sítě dostupná.',
  disabled:
    'Tento odkaz již není aktivní. Pokud potřebujete pomoc, obraťte se prosím na odesílatele tohoto odkazu.',
  unavailableContact:
    'Tato konverzace je momentálně nedostupná. Pokud stále potřebujete pomoc, obraťte se prosím na odesílatele tohoto odkazu.',
  cooldown: 'Limit byl prozatím vyčerpán. Vraťte se prosím později.',
  retryIn: 'Znovu to můžete zkusit za {time}.',
  tooLong: 'Tato zpráva je příliš dlouhá.',
  atMost: 'Nejvýše {max} znaků.',
  rateLimited: 'Odesíláte zprávy příliš rychle. Chvíli prosím počkejte.',
  failed: 'Něco se pokazilo. Zkuste to prosím znovu.',
  offline: 'Zdá se, že jste offline. Zkontrolujte připojení a odešlete zprávu znovu.',
  noReply: 'Asistentovi se teď nepodařilo odpovědět. Odešlete prosím zprávu znovu.',
  conversationEnded: 'Tato konverzace skončila. Chcete-li začít novou, odešlete zprávu znovu.',
  readAloud: 'Číst odpovědi nahlas',
  noScript:
    'Tento chat vyžaduje JavaScript. Zapněte ho prosím v nastavení prohlížeče a načtěte stránku znovu.',
};

const tr: UiStrings = {
  title: LINK_PAGE_TITLES.tr,
  placeholder: 'Mesajınızı yazın…',
  intro: 'Sohbeti başlatmak için bir mesaj gönderin.',
  inputLabel: 'Mesajınız',
  send: 'Gönder',
  starting: 'Sohbet başlatılıyor…',
  thinking: 'Bir saniye…',
  waitForReply: 'Lütfen bir sonraki mesajınızı göndermeden önce yanıtı bekleyin.',
  you: 'Siz',
  assistant: 'Asistan',
  notFound: 'Bu bağlantı mevcut değil.',
  unavailable: 'Bu sohbet şu anda kullanılamıyor. Lütfen daha sonra tekrar deneyin.',
  forbidden: 'Bu sohbete ağınızdan erişilemiyor.',
  disabled:
    'Bu bağlantı artık etkin değil. Yardıma ihtiyacınız varsa lütfen bu bağlantıyı gönderen tarafla iletişime geçin.',
  unavailableContact:
    'Bu sohbet şu anda kullanılamıyor. Hâlâ yardıma ihtiyacınız varsa lütfen bu bağlantıyı gönderen tarafla iletişime geçin.',
  cooldown: 'Şimdilik sınıra ulaştınız. Lütfen daha sonra tekrar gelin.',
  retryIn: '{time} sonra tekrar deneyebilirsiniz.',
  tooLong: 'Bu mesaj çok uzun.',
  atMost: 'En fazla {max} karakter.',
  rateLimited: 'Çok hızlı mesaj gönderiyorsunuz. Lütfen biraz bekleyin.',
  failed: 'Bir sorun oluştu. Lütfen tekrar deneyin.',
  offline: 'Çevrimdışı görünüyorsunuz. Bağlantınızı kontrol edip mesajınızı tekrar gönderin.',
  noReply: 'Asistan şu anda yanıt veremedi. Lütfen mesajınızı tekrar gönderin.',
  conversationEnded: 'Bu sohbet sona erdi. Yeni bir sohbet başlatmak için mesajınızı tekrar gönderin.',
  readAloud: 'Yanıtları sesli oku',
  noScript:
    'Bu sohbet için JavaScript gerekiyor. Lütfen tarayıcınızın ayarlarından etkinleştirin ve sayfayı yeniden yükleyin.',
};

/** The shipped interface languages by primary subtag. */
export const UI_STRINGS: Readonly<Record<LinkPageLanguage, UiStrings>> = {
  en,
  de,
  fr,
  es,
  it,
  nl,
  pt,
  pl,
  sv,
  da,
  nb,
  fi,
  cs,
  tr,
};

// Languages written right to left by default, and the right-to-left scripts a tag may name
// (ku-Arab, pa-Arab): the page's texts in one of them are laid out right to left.
const RTL_LANGUAGES = new Set(
  'ar arc bal bqi ckb dv fa glk he iw ji khw ks lrc mzn nqo pnb prs ps sd sdh syr ug ur yi'.split(' '),
);
const RTL_SCRIPTS = new Set('adlm arab hebr mand nkoo rohg samr syrc thaa yezi'.split(' '));

/** Whether a language tag's text is written right to left, by its script subtag, else its language's. */
export function isRightToLeft(tag: string): boolean {
  const norm = tag.trim().toLowerCase().replace(/_/g, '-');
  // The script subtag follows the language and any extended language subtags.
  const script = /^[a-z]{2,3}(?:-[a-z]{3}){0,3}-([a-z]{4})(?:-|$)/.exec(norm)?.[1];
  return script ? RTL_SCRIPTS.has(script) : RTL_LANGUAGES.has(norm.split('-')[0]);
}

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
 * follow it; for a language not shipped they take the visitor's next accepted device language
 * that is, else English; `textLang` names the language they are actually in.
 */
export function pickLanguage(
  acceptLanguage: string,
  device: { languages: readonly string[]; defaultLanguage: string } | undefined,
): { lang: string; textLang: string; strings: UiStrings } {
  const offered =
    device && device.languages.length > 0 ? device.languages : [device?.defaultLanguage || 'en'];
  // The device languages the visitor accepts, in the visitor's order.
  const accepted: string[] = [];
  for (const wanted of parseAcceptLanguage(acceptLanguage)) {
    const exact = offered.find((o) => o.toLowerCase() === wanted.toLowerCase());
    const loose = exact ?? offered.find((o) => primary(o) === primary(wanted));
    if (loose) accepted.push(loose);
  }
  const lang = accepted[0] ?? (device?.defaultLanguage || offered[0]);
  // The assistant speaks `lang`; the page's own texts need only be read, so a visitor who accepts
  // Arabic, then French, reads them in French rather than in English.
  for (const tag of [lang, ...accepted]) {
    const shipped = linkPageTextLanguage(tag);
    if (shipped) {
      return { lang, textLang: shipped === primary(tag) ? tag : shipped, strings: UI_STRINGS[shipped] };
    }
  }
  return { lang, textLang: 'en', strings: en };
}

/**
 * A `retryIn` text with the wait until the visitor may try again, in its language's short units:
 * minutes up to 90, then hours up to 36, then days (a day-long window is "1 day", not "1440 min").
 * The page's script has a copy (`RETRY_IN_SCRIPT`); a test holds the two equal.
 */
export function retryInText(template: string, seconds: number, lang: string): string {
  let n = Math.max(1, Math.ceil(seconds / 60));
  let unit = 'minute';
  if (n > 90) {
    n = Math.ceil(n / 60);
    unit = 'hour';
    if (n > 36) {
      n = Math.ceil(n / 24);
      unit = 'day';
    }
  }
  let time: string;
  try {
    time = new Intl.NumberFormat(lang, { style: 'unit', unit, unitDisplay: 'short' }).format(n);
  } catch {
    time = `${n} ${unit}`;
  }
  // A unit written with a full stop ("25 min.") also ends the sentence: one stop, not two.
  return template.replace(/\{time\}(\.?)/, (_all, stop: string) =>
    stop && time.endsWith('.') ? time : time + stop,
  );
}

/** `retryInText` as the page's script runs it. */
export const RETRY_IN_SCRIPT = `function retryInText(t,sec,lang){var n=Math.max(1,Math.ceil(sec/60)),u='minute',time;
  if(n>90){n=Math.ceil(n/60);u='hour';if(n>36){n=Math.ceil(n/24);u='day';}}
  try{time=new Intl.NumberFormat(lang,{style:'unit',unit:u,unitDisplay:'short'}).format(n);}catch(e){time=n+' '+u;}
  return t.replace(/\\{time\\}(\\.?)/,function(all,stop){return stop&&time.slice(-1)==='.'?time:time+stop;});}`;
